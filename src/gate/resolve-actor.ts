/** Who is acting lives with the input it is parsed from (src/input/resolve-actor.ts), so trust/ can read it without gate/. */
export { resolveActor } from "../input/resolve-actor.js";

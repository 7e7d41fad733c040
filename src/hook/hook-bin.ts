import { runHook } from "./run-hook.js";

/** The entry of dist/twinlock-hook.cjs: `twinlock hook …` as its own small bundle, so each call loads a few kB, not the CLI. */
runHook(process.argv.slice(3));

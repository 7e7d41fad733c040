import os from "node:os";
import path from "node:path";
import type { GateHome } from "./gate-home.js";

/**
 * The folders of the gate's own that no handoff may be, be inside, or hold
 * (see `resolveHandoffRoot`): the gate home, the folder of the key
 * `TWINLOCK_KEY` names, and `~/.twinlock`, where SECURITY.md keeps a
 * person's keys. A freeze would copy them into the home and show them; a
 * re-hash would list their file names in its report.
 */
export function gateFolders(home: GateHome): string[] {
  const folders = [home.dir, path.join(os.homedir(), ".twinlock")];
  const key = process.env.TWINLOCK_KEY;
  if (key !== undefined && key !== "" && !key.includes("\u0000")) folders.push(path.dirname(path.resolve(key)));
  return folders;
}

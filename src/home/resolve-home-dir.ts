import os from "node:os";
import path from "node:path";

/**
 * Where the gate home is: `--home DIR`, else `TWINLOCK_HOME`, else
 * `$XDG_STATE_HOME/twinlock`, else `~/.local/state/twinlock`. Its own module,
 * free of the schema library, so the hook (run on every agent tool call) can
 * find the home without loading it.
 */
export function resolveHomeDir(given?: string): string {
  const chosen = given ?? nonEmpty(process.env.TWINLOCK_HOME);
  if (chosen !== undefined) return path.resolve(chosen);
  const xdg = nonEmpty(process.env.XDG_STATE_HOME);
  if (xdg !== undefined) return path.resolve(xdg, "twinlock");
  return path.join(os.homedir(), ".local", "state", "twinlock");
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

import { existsSync, type Stats, statSync } from "node:fs";
import path from "node:path";
import { UsageError } from "../errors/errors.js";
import { requirePlainPath } from "../input/parse-input.js";
import { describeFileKind } from "../input/read-regular-file.js";
import { CONFIG_FILE } from "./suite-config.js";

/**
 * Where the suite is: `--suite DIR`, else `TWINLOCK_SUITE`, else the nearest
 * folder upward from `cwd` holding `twinlock.yaml`. Throws a UsageError that
 * says how to point at a suite when none is found.
 */
export function findSuiteRoot(options: { suite?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {}): string {
  const cwd = options.cwd ?? process.cwd();
  const given = options.suite ?? options.env?.TWINLOCK_SUITE ?? process.env.TWINLOCK_SUITE;
  if (given !== undefined && given !== "") {
    const from = options.suite !== undefined ? "--suite" : "TWINLOCK_SUITE";
    const dir = path.resolve(cwd, requirePlainPath(given, from));
    if (!existsSync(dir)) throw new UsageError(`${from} ${given}: no such folder; give the folder that holds the prompt files`);
    let stat: Stats;
    try {
      stat = statSync(dir);
    } catch (error) {
      throw new UsageError(
        `${from} ${given}: cannot be read (${(error as NodeJS.ErrnoException).code}); give the folder that holds the prompt files`,
        { cause: error },
      );
    }
    if (!stat.isDirectory())
      throw new UsageError(`${from} ${given}: ${describeFileKind(stat)}, not a folder; give the folder that holds the prompt files`);
    return dir;
  }
  let dir = path.resolve(cwd);
  for (;;) {
    if (existsSync(path.join(dir, CONFIG_FILE))) return dir;
    const parent = path.dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new UsageError(`no suite found: no ${CONFIG_FILE} in ${cwd} or any folder above it; pass --suite DIR or set TWINLOCK_SUITE`);
}

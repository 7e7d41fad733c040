import { writeFileSync } from "node:fs";
import path from "node:path";

/**
 * A stand-in `gh` in `bin` that answers the pulls API (`gh api
 * repos/REPO/pulls/N …`) with each pull request's author login from
 * `authors`, and 404s for any other, as GitHub does; every call is logged.
 * Returns the log's path.
 */
export function writeStandInGh(bin: string, repository: string, authors: Readonly<Record<string, string>>): string {
  const log = path.join(bin, "gh-calls.log");
  const table = Object.entries(authors)
    .map(([n, login]) => `  repos/${repository}/pulls/${n}) echo '${login}';;`)
    .join("\n");
  writeFileSync(
    path.join(bin, "gh"),
    `#!/bin/sh\nprintf '%s\\n' "$*" >> '${log}'\ncase "$2" in\n${table}\n  *) echo "gh: Not Found (HTTP 404)" >&2; exit 1;;\nesac\n`,
    { mode: 0o755 },
  );
  writeFileSync(log, "");
  return log;
}

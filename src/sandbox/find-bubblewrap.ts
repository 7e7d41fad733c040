import { spawnSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import path from "node:path";

/** bwrap, found and seen to work, or why not. */
export type Bubblewrap = { ok: true; path: string } | { ok: false; reason: string };

/**
 * Find bwrap (bubblewrap) on `env.PATH` and check that it can make a
 * sandbox here: it runs `/bin/sh -c :` with the root read-only. It fails
 * where bwrap is missing, not Linux, or where user namespaces are off (a
 * container without them), and with a bwrap too old for `--disable-userns`
 * (before 0.8.0), with the same namespace flags the sandbox uses.
 */
export function findBubblewrap(env: NodeJS.ProcessEnv = process.env): Bubblewrap {
  if (process.platform !== "linux") return { ok: false, reason: `bubblewrap runs on Linux only, and this is ${process.platform}` };
  const found = (env.PATH ?? "")
    .split(path.delimiter)
    .filter((d) => path.isAbsolute(d))
    .map((d) => path.join(d, "bwrap"))
    .find((p) => {
      try {
        accessSync(p, constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  if (!found) return { ok: false, reason: "bwrap (bubblewrap) is not on PATH" };
  const probe = spawnSync(
    found,
    [
      "--unshare-user",
      "--disable-userns",
      "--unshare-ipc",
      "--cap-drop",
      "ALL",
      "--die-with-parent",
      "--ro-bind",
      "/",
      "/",
      "--dev",
      "/dev",
      "--",
      "/bin/sh",
      "-c",
      ":",
    ],
    {
      encoding: "utf8",
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  if (probe.error) return { ok: false, reason: `${found} could not be started (${(probe.error as NodeJS.ErrnoException).code})` };
  if (probe.status !== 0) {
    const why = (probe.stderr ?? "").trim().split("\n")[0]?.slice(0, 200) || `exit ${probe.status ?? probe.signal}`;
    return { ok: false, reason: `${found} cannot make a sandbox here (${why})` };
  }
  return { ok: true, path: found };
}

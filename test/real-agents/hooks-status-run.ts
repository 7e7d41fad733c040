import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DIST_BIN } from "../support/ensure-built.js";
import { AGENT_CLIS, type RealAgent } from "./agent-clis.js";

/** What `twinlock hooks status --agent X` printed and how it exited. */
export interface HooksStatus {
  exitCode: number | null;
  output: string;
}

/**
 * Runs `twinlock hooks install --agent X --project` (with `--trust` when `trust`) in a new project with a new HOME
 * whose tool config is the one the suite's runs use (agent-clis.ts: Codex's project trusted), then `twinlock hooks status --agent X` there, with the pinned CLI on PATH (so status reads its real version) and no
 * twinlock on it. The folders' names are put back as `<project>`, `<home>` and `<gate-home>`, so the text reads the
 * same each run. Everything it made is gone when it returns.
 */
export function hooksStatusAfterInstall(agent: RealAgent, trust: boolean): HooksStatus {
  const root = mkdtempSync(path.join(os.tmpdir(), `twinlock-status-${agent}-`));
  try {
    const [project, home, gateHome] = ["project", "home", "gate-home"].map((d) => path.join(root, d)) as [string, string, string];
    for (const d of [project, home, gateHome, ...[".claude", ".codex", ".gemini"].map((t) => path.join(home, t))])
      mkdirSync(d, { recursive: true });
    // The tool's own user config as the suite's runs have it (Codex: the project trusted); no model is asked here.
    AGENT_CLIS[agent].configure({ project, home, modelUrl: "http://127.0.0.1:9" });
    const env = {
      PATH: [path.dirname(AGENT_CLIS[agent].bin), path.dirname(process.execPath), "/usr/bin", "/bin"].join(":"),
      HOME: home,
      CODEX_HOME: path.join(home, ".codex"),
      LANG: "C.UTF-8",
    };
    const install = [DIST_BIN, "hooks", "install", "--agent", agent, "--project", "--home", gateHome, ...(trust ? ["--trust"] : [])];
    const installed = spawnSync(process.execPath, install, { cwd: project, env, encoding: "utf8" });
    if (installed.status !== 0) throw new Error(`hooks install --agent ${agent} exited ${installed.status}: ${installed.stderr}`);
    const r = spawnSync(process.execPath, [DIST_BIN, "hooks", "status", "--agent", agent], {
      cwd: project,
      env,
      encoding: "utf8",
      timeout: 60_000,
    });
    const output = `${r.stdout}${r.stderr}`
      .replaceAll(project, "<project>")
      .replaceAll(gateHome, "<gate-home>")
      .replaceAll(home, "<home>")
      .replaceAll(root, "<root>");
    return { exitCode: r.status, output };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

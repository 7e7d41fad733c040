/*
 * `twinlock exec` running Codex or Gemini: in bubblewrap, where only the
 * admitted targets can be written, or refused when bubblewrap is missing,
 * or (--hook-only) without it. The tool here is a stand-in script named
 * in Codex's package path (exec identifies it as Codex) that runs a shell
 * script, which writes what the hook would never see: a shell's writes.
 */
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findBubblewrap } from "../../src/sandbox/find-bubblewrap.js";
import { processesIn } from "../../src/sandbox/reap-sandbox.js";
import { removeDeadSessionTempDirs } from "../../src/sandbox/session-temp-folder.js";
import { agentStandIn } from "../../src/test-support/agent-stand-in.js";
import { driveTo, type GateRun, makeGateRun, makeRunTempDir, removeGateRuns, workflowOf } from "../../src/test-support/run-fixture.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

beforeAll(ensureBuilt, 180_000);
afterAll(() => removeGateRuns());
// An exec killed by SIGKILL cannot remove its own session folders: the next session would, and so does this file.
afterAll(() => removeDeadSessionTempDirs());

/**
 * A run not admitted yet, with `cart/cache.go` (a target) and a stand-in `codex` that writes it, writes its own
 * arguments into the new target `cart/cache_race_test.go`, and writes `cart/stray.go`, which is no target.
 */
async function runWithStandIn(): Promise<{ g: GateRun; codex: string; script: string }> {
  const g = makeGateRun();
  await driveTo(g, "dry_run_ready");
  mkdirSync(path.join(g.dir, "cart"));
  writeFileSync(path.join(g.dir, "cart", "cache.go"), "before\n");
  const { program, script } = agentStandIn(
    path.join(g.dir, "bin"),
    "codex",
    [
      "#!/bin/sh",
      'echo "$@" > "$TMPDIR/args"',
      "echo fixed > cart/cache.go",
      'cat "$TMPDIR/args" > cart/cache_race_test.go',
      "echo stray > cart/stray.go",
      "exit 0",
      "",
    ].join("\n"),
  );
  return { g, codex: program, script };
}

function exec(g: GateRun, codex: string, flags: string[], PATH: string) {
  return spawnSync(process.execPath, [DIST_BIN, "exec", g.runFile, "MD-30", ...flags, "--", codex, "exec", "fix it"], {
    cwd: g.dir,
    encoding: "utf8",
    // HOME outside the project: a state folder (~/.codex) inside it is refused, since it would be writable.
    env: { PATH, HOME: makeRunTempDir("twinlock-exec-user-"), TWINLOCK_HOME: process.env.TWINLOCK_HOME },
  });
}

describe("twinlock exec running Codex", () => {
  it("refuses in one line when bubblewrap is not on PATH, before the admission uses the consent, and says what to do", async () => {
    const { g, codex } = await runWithStandIn();
    // node on PATH (the stand-in's interpreter), bwrap not.
    const nodeOnly = makeRunTempDir("twinlock-node-only-");
    symlinkSync(process.execPath, path.join(nodeOnly, "node"));
    const r = exec(g, codex, [], nodeOnly);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).toMatch(
      /codex runs a call when the hook fails .*bwrap \(bubblewrap\) is not on PATH: install bubblewrap .*--hook-only/,
    );
    expect(workflowOf(g).state).toBe("dry_run_ready");
    expect(readFileSync(path.join(g.dir, "cart", "cache.go"), "utf8")).toBe("before\n");
  });

  it("refuses, before the admission, a HOME inside the project: Codex's state folder there would make the project writable", async () => {
    const { g, codex } = await runWithStandIn();
    const r = spawnSync(process.execPath, [DIST_BIN, "exec", g.runFile, "MD-30", "--", codex, "exec", "x"], {
      cwd: g.dir,
      encoding: "utf8",
      env: { PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`, HOME: g.dir, TWINLOCK_HOME: process.env.TWINLOCK_HOME },
    });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/codex's state folder .* is or holds the project folder/);
    expect(workflowOf(g).state).toBe("dry_run_ready");
  });

  it("with --hook-only runs it without the sandbox, says so, and then nothing stops what a shell writes", async () => {
    const { g, codex } = await runWithStandIn();
    const r = exec(g, codex, ["--hook-only"], `${path.dirname(process.execPath)}:/usr/bin:/bin`);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain("--hook-only: codex runs without exec's sandbox, held by the hook alone");
    expect(readFileSync(path.join(g.dir, "cart", "stray.go"), "utf8")).toBe("stray\n");
  });

  const bwrap = findBubblewrap();
  it.skipIf(!bwrap.ok)(
    `lets it write the admitted targets, a new one included, and no other file of the project${bwrap.ok ? "" : ` (skipped: ${bwrap.reason})`}`,
    async () => {
      const { g, codex } = await runWithStandIn();
      const r = exec(g, codex, [], `${path.dirname(process.execPath)}:/usr/bin:/bin`);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/codex\.js runs in a bubblewrap sandbox: it may write only the admitted targets \(.*cart\/cache\.go.*\)/);
      expect(readFileSync(path.join(g.dir, "cart", "cache.go"), "utf8")).toBe("fixed\n");
      // Codex's own sandbox is off inside this one (it cannot nest): the stand-in saw the override first.
      expect(readFileSync(path.join(g.dir, "cart", "cache_race_test.go"), "utf8")).toBe(
        '-c sandbox_mode="danger-full-access" exec fix it\n',
      );
      expect(existsSync(path.join(g.dir, "cart", "stray.go"))).toBe(false);
      expect(r.stderr).toMatch(/cart\/stray\.go: Read-only file system/);
    },
    60_000,
  );

  it.skipIf(!bwrap.ok)(
    `lets Claude Code replace a file target by a temporary file renamed over it, and names a new file it made beside the target after the command${bwrap.ok ? "" : ` (skipped: ${bwrap.reason})`}`,
    async () => {
      const { g } = await runWithStandIn();
      const claude = agentStandIn(
        path.join(g.dir, "bin"),
        "claude",
        [
          "#!/bin/sh",
          "echo fixed > cart/cache.go.tmp.1 && mv cart/cache.go.tmp.1 cart/cache.go",
          "echo stray > cart/stray.go",
          "echo stray > stray.go",
          "exit 0",
          "",
        ].join("\n"),
      ).program;
      const r = spawnSync(process.execPath, [DIST_BIN, "exec", g.runFile, "MD-30", "--", claude, "-p", "fix it"], {
        cwd: g.dir,
        encoding: "utf8",
        env: {
          PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
          HOME: makeRunTempDir("twinlock-exec-user-"),
          TWINLOCK_HOME: process.env.TWINLOCK_HOME,
        },
      });
      expect(r.status, r.stderr).toBe(0);
      expect(readFileSync(path.join(g.dir, "cart", "cache.go"), "utf8")).toBe("fixed\n");
      expect(readFileSync(path.join(g.dir, "cart", "stray.go"), "utf8")).toBe("stray\n");
      expect(r.stderr).toMatch(/left a new entry beside the file targets that is no target: .*cart\/stray\.go \(not a target/);
      expect(r.stderr.indexOf("cart/stray.go (not a target")).toBeLessThan(r.stderr.indexOf("the session is unbound"));
      // The rest of the project stays read-only.
      expect(existsSync(path.join(g.dir, "stray.go"))).toBe(false);
      expect(r.stderr).toMatch(/stray\.go: Read-only file system/);
    },
    60_000,
  );

  it.skipIf(!bwrap.ok)(
    `ends what it left running in the sandbox (a loop in a session of its own) with it, before it reports the session unbound${bwrap.ok ? "" : ` (skipped: ${bwrap.reason})`}`,
    async () => {
      const { g, codex, script } = await runWithStandIn();
      writeFileSync(
        script,
        [
          "#!/bin/sh",
          `setsid sh -c 'echo $$ > cart/cache_race_test.go; while :; do echo late >> cart/cache.go; echo late >> "$HOME/.codex/late"; sleep 0.05; done' </dev/null >/dev/null 2>&1 &`,
          "until [ -s cart/cache_race_test.go ]; do sleep 0.01; done",
          "exit 0",
          "",
        ].join("\n"),
      );
      const r = exec(g, codex, [], `${path.dirname(process.execPath)}:/usr/bin:/bin`);
      expect(r.status, r.stderr).toBe(0);
      // The loop ended with the tool: the end of the first process of the sandbox's PID namespace kills every other in it
      // (exec's reap, which finds none left then, is the second layer). Nothing writes the target after exec returned.
      expect(Number(readFileSync(path.join(g.dir, "cart", "cache_race_test.go"), "utf8"))).toBeGreaterThan(1);
      const after = readFileSync(path.join(g.dir, "cart", "cache.go"), "utf8");
      spawnSync("sleep", ["0.3"]);
      expect(readFileSync(path.join(g.dir, "cart", "cache.go"), "utf8")).toBe(after);
    },
    60_000,
  );

  it.skipIf(!bwrap.ok)(
    `leaves no process of the sandbox running when exec itself is killed by SIGKILL: its watchdog kills them${bwrap.ok ? "" : ` (skipped: ${bwrap.reason})`}`,
    async () => {
      const { g, codex, script } = await runWithStandIn();
      writeFileSync(
        script,
        [
          "#!/bin/sh",
          // One loop in a session of its own (what exec's own reaper would find), one child of the tool: both write a target.
          `setsid sh -c 'while :; do echo late >> cart/cache.go; sleep 0.05; done' </dev/null >/dev/null 2>&1 &`,
          `(while :; do echo late >> cart/cache.go; sleep 0.05; done) &`,
          "echo started > cart/cache_race_test.go",
          "wait",
          "",
        ].join("\n"),
      );
      const child = spawn(process.execPath, [DIST_BIN, "exec", g.runFile, "MD-30", "--", codex, "exec", "fix it"], {
        cwd: g.dir,
        env: {
          PATH: `${path.dirname(process.execPath)}:/usr/bin:/bin`,
          HOME: makeRunTempDir("twinlock-exec-user-"),
          TWINLOCK_HOME: process.env.TWINLOCK_HOME,
        },
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d) => (stderr += d));
      const gone = new Promise((resolve) => child.once("exit", resolve));
      const started = path.join(g.dir, "cart", "cache_race_test.go");
      const pause = () => new Promise((r) => setTimeout(r, 20));
      try {
        while (!existsSync(started) || readFileSync(started, "utf8") !== "started\n") {
          if (child.exitCode !== null) throw new Error(`exec ended first: ${stderr}`);
          await pause();
        }
        const ns = mountNamespaceOfWriters(path.join(g.dir, "cart", "cache.go"));
        expect(ns, stderr).toBeDefined();
        child.kill("SIGKILL");
        await gone;
        // Each process in the sandbox's mount namespace is gone (the test's own timeout bounds the wait).
        while (processesIn(ns as number).length > 0) await pause();
        const after = readFileSync(path.join(g.dir, "cart", "cache.go"), "utf8");
        await new Promise((r) => setTimeout(r, 200));
        expect(readFileSync(path.join(g.dir, "cart", "cache.go"), "utf8")).toBe(after);
      } finally {
        child.kill("SIGKILL");
      }
    },
    60_000,
  );
});

/** The mount namespace of a process whose working folder is the target's project and that is not in this one's (the sandbox's). */
function mountNamespaceOfWriters(target: string): number | undefined {
  const mine = readlinkSync("/proc/self/ns/mnt");
  const project = path.dirname(path.dirname(target));
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      const ns = readlinkSync(`/proc/${name}/ns/mnt`);
      if (ns !== mine && readlinkSync(`/proc/${name}/cwd`) === project) return Number(ns.slice(5, -1));
    } catch {
      // gone, or not ours
    }
  }
  return undefined;
}

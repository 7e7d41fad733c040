import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { UsageError } from "../errors/errors.js";
import { agentToolOf } from "./agent-tool.js";
import { chooseSandbox, confineCommand, ownProcessGroup } from "./exec-sandbox.js";
import { findBubblewrap } from "./find-bubblewrap.js";
import { SANDBOX_MCP_SOCKET, startMcpRelay } from "./mcp-relay.js";
import { processesIn, readSandboxInfo } from "./reap-sandbox.js";
import { seccompFilter } from "./seccomp-filter.js";

/** Python, whose fcntl and ctypes make the attacks short (Debian's; tests that need it are skipped without it). */
const PYTHON = "/usr/bin/python3";
const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), "twinlock-exec-sandbox-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
/**
 * The PID outside of the process numbered `inner` in the sandbox's PID namespace `ns` (its NSpid's last entry), read
 * through its threads too (a leader that is a zombie has no readable namespace link); undefined when there is none.
 */
function outerPidOf(ns: number | undefined, inner: number): number | undefined {
  const want = `pid:[${ns}]`;
  for (const name of readdirSync("/proc")) {
    if (!/^[0-9]+$/.test(name)) continue;
    try {
      const nspid = /^NSpid:\t(.*)$/m.exec(readFileSync(`/proc/${name}/status`, "utf8"))?.[1]?.split("\t");
      if (nspid === undefined || Number(nspid[nspid.length - 1]) !== inner || nspid.length < 2) continue;
      const links = [`/proc/${name}/ns/pid`, ...readdirSync(`/proc/${name}/task`).map((t) => `/proc/${name}/task/${t}/ns/pid`)];
      if (
        links.some((l) => {
          try {
            return readlinkSync(l) === want;
          } catch {
            return false;
          }
        })
      )
        return Number(name);
    } catch {
      // gone
    }
  }
  return undefined;
}
/** The tool as the command names it: these are tests of the confinement (identify-agent-tool.test.ts tests what a program is). */
const byName = {
  env: process.env,
  cwd: process.cwd(),
  identify: (cmd: readonly string[]) => ({ tool: agentToolOf(cmd), argsAt: 1, what: "a stand-in" }),
};
const missing = () => ({ ok: false as const, reason: "bwrap (bubblewrap) is not on PATH" });
const present = () => ({ ok: true as const, path: "/usr/bin/bwrap" });

describe("chooseSandbox", () => {
  it("refuses Codex and Gemini in one line when bubblewrap is missing, saying why and what to do", () => {
    for (const cmd of [
      ["codex", "exec", "x"],
      ["gemini", "-p", "x"],
    ]) {
      let error: unknown;
      try {
        chooseSandbox(cmd, {}, missing, byName);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(UsageError);
      const message = (error as Error).message;
      expect(message).not.toContain("\n");
      expect(message).toMatch(/runs a call when the hook fails .* bwrap \(bubblewrap\) is not on PATH: install bubblewrap .*--hook-only/);
    }
  });

  it("runs Codex without the sandbox under --hook-only, and says what that gives up", () => {
    const choice = chooseSandbox(["codex"], { hookOnly: true }, missing, byName);
    expect(choice).toEqual({
      kind: "none",
      notes: [expect.stringMatching(/--hook-only: codex runs without exec's sandbox.*runs the call anyway/)],
    });
  });

  it("runs Claude Code in the sandbox too: refused without bubblewrap, saying its shell commands pass the hook unseen", () => {
    expect(chooseSandbox(["claude", "-p", "x"], {}, present, byName)).toMatchObject({ kind: "bubblewrap", tool: "claude" });
    expect(() => chooseSandbox(["claude", "-p", "x"], {}, missing, byName)).toThrow(
      /^claude's shell commands pass the hook, which cannot see what they write, so exec runs it in a bubblewrap sandbox that keeps its writes to the admitted targets, and bwrap \(bubblewrap\) is not on PATH: .*--hook-only/,
    );
    expect(chooseSandbox(["claude"], { hookOnly: true }, missing, byName)).toEqual({
      kind: "none",
      notes: [
        "twinlock: --hook-only: claude runs without exec's sandbox, held by the hook alone; a shell command the hook lets through may write any file the user can",
      ],
    });
  });

  it("says a planner's sandbox keeps its writes to its handoff folder, not to admitted targets", () => {
    const where = { env: process.env, cwd: scratch, binder: "plan" as const };
    expect(() => chooseSandbox(["gemini"], {}, missing, { ...where, identify: byName.identify })).toThrow(
      /so plan runs it in a bubblewrap sandbox that keeps its writes to its handoff folder,/,
    );
    expect(chooseSandbox(["codex"], { hookOnly: true }, missing, { ...where, identify: byName.identify })).toMatchObject({
      notes: [expect.stringMatching(/^twinlock: --hook-only: codex runs without plan's sandbox/)],
    });
    const c = confineCommand(chooseSandbox(["/bin/sh"], { sandbox: true }, present, { ...where, identify: byName.identify }), {
      cmd: ["/bin/sh"],
      env: {},
      cwd: scratch,
      writable: [],
      binder: "plan",
    });
    try {
      expect(c.notes.join("\n")).toMatch(/runs in a bubblewrap sandbox: it may write only its handoff folder \(none\)/);
      expect(c.notes.join("\n")).not.toContain("admitted targets");
    } finally {
      c.release();
    }
  });

  it("refuses other commands, unless --sandbox runs them in the sandbox or --hook-only without it", () => {
    expect(() => chooseSandbox(["make"], {}, present, byName)).toThrow(
      /^exec cannot tell which agent tool it would run: make is a stand-in; exec confines Claude Code, Codex CLI and Gemini CLI, .*--sandbox .*--hook-only/,
    );
    expect(chooseSandbox(["make"], { hookOnly: true }, present, byName)).toMatchObject({ kind: "none" });
    expect(chooseSandbox(["make"], { sandbox: true }, present, byName)).toMatchObject({ kind: "bubblewrap", tool: undefined });
    expect(() => chooseSandbox(["make"], { sandbox: true }, missing, byName)).toThrow(
      /--sandbox asks exec to run make in a bubblewrap sandbox, and bwrap/,
    );
  });

  it("refuses --hook-only with --sandbox", () => {
    expect(() => chooseSandbox(["codex"], { hookOnly: true, sandbox: true }, present, byName)).toThrow(/contradict/);
  });
});

describe("confineCommand", () => {
  it("starts bwrap through /bin/sh with the seccomp filter on descriptor 3, Codex's own sandbox off, a private TMPDIR, and its state folder read-only but for its runtime entries", () => {
    const home = path.join(scratch, "home-argv");
    mkdirSync(path.join(home, ".codex"), { recursive: true });
    writeFileSync(path.join(home, ".codex", "config.toml"), "");
    writeFileSync(path.join(home, ".codex", "auth.json"), "{}");
    const target = path.join(scratch, "argv-target.go");
    writeFileSync(target, "x");
    const choice = chooseSandbox(["codex", "exec", "x"], {}, present, byName);
    const project = path.join(scratch, "argv-project");
    mkdirSync(project);
    const c = confineCommand(choice, { cmd: ["codex", "exec", "x"], env: { HOME: home }, cwd: project, writable: [target] });
    try {
      expect(c.cmd.slice(0, 6)).toEqual([
        "/bin/sh",
        "-c",
        'f=$1; i=$2; shift 2; exec "$@" 3<"$f" 4>"$i"',
        "twinlock-sandbox",
        expect.stringMatching(/seccomp\.bpf$/),
        expect.stringMatching(/bwrap-info\.json$/),
      ]);
      // The filter protects exec (this process) and its watchdog from a confined process's signals.
      expect(readFileSync(c.cmd[4] as string)).toEqual(
        seccompFilter(process.arch, [process.pid, c.watchdog as number, ...ownProcessGroup()]),
      );
      const argv = c.cmd.slice(6);
      expect(argv.slice(1, 7)).toEqual(["--unshare-user", "--disable-userns", "--unshare-ipc", "--unshare-pid", "--cap-drop", "ALL"]);
      expect(argv.slice(argv.indexOf("--") + 1)).toEqual(["codex", "-c", 'sandbox_mode="danger-full-access"', "exec", "x"]);
      const pair = (flag: string, p: string) => argv.some((a, i) => a === flag && argv[i + 1] === p && argv[i + 2] === p);
      expect(pair("--bind", target)).toBe(true);
      // The state folder stays read-only as the rest (its configuration, its login, what is not there yet)
      // but for its runtime entries; its shell snapshots, which it sources, are private to the session.
      const codex = path.join(home, ".codex");
      expect(argv.some((a, i) => a === "--bind" && argv[i + 1] === codex)).toBe(false);
      expect(pair("--bind", path.join(codex, "sessions"))).toBe(true);
      expect(argv.some((a, i) => a.startsWith("--") && a.endsWith("bind") && argv[i + 2] === path.join(codex, "config.toml"))).toBe(false);
      expect(argv.some((a, i) => a === "--bind" && argv[i + 2] === path.join(codex, "auth.json"))).toBe(false);
      const snapshots = argv.findIndex((a, i) => a === "--bind" && argv[i + 2] === path.join(codex, "shell_snapshots"));
      expect(argv[snapshots + 1]).toMatch(/twinlock-sandbox-.*\/private\/\d+$/);
      // Configuration Codex reads when it is there, not there yet: no mount makes it (the read-only folder refuses the
      // name), and nothing is put in the person's folder in its place.
      for (const name of [".env", "hooks.json", "requirements.toml", "AGENTS.md"]) {
        expect(argv.some((a, i) => a.endsWith("bind") && argv[i + 2] === path.join(codex, name))).toBe(false);
        expect(existsSync(path.join(codex, name))).toBe(false);
      }
      expect(existsSync(path.join(codex, ".twinlock-stand-ins"))).toBe(false);
      expect(c.notes.join("\n")).not.toMatch(/not there yet/);
      expect(c.env.TMPDIR).toMatch(/twinlock-sandbox-.*\/tmp$/);
      expect(pair("--bind", c.env.TMPDIR as string)).toBe(true);
      // A program inside can tell it is confined (the Claude Agent SDK's adapter refuses to start there).
      expect(c.env.TWINLOCK_SANDBOX).toBe("bubblewrap");
    } finally {
      c.release();
    }
    expect(existsSync(path.dirname(c.env.TMPDIR as string))).toBe(false);
    // The configuration that was there is kept.
    expect(existsSync(path.join(home, ".codex", "config.toml"))).toBe(true);
  });

  it("mounts Claude Code's file target through its folder (writable, every other entry read-only again), not alone, and makes no placeholder for a new one", () => {
    const home = path.join(scratch, "home-argv-claude");
    mkdirSync(home);
    const dir = path.join(scratch, "argv-claude", "cart");
    mkdirSync(path.join(dir, "sub"), { recursive: true });
    writeFileSync(path.join(dir, "cache.go"), "x");
    writeFileSync(path.join(dir, "keep.go"), "x");
    const choice = chooseSandbox(["claude", "-p", "x"], {}, present, byName);
    const writable = [path.join(dir, "cache.go"), path.join(dir, "new_test.go")];
    const c = confineCommand(choice, { cmd: ["claude", "-p", "x"], env: { HOME: home }, cwd: path.dirname(dir), writable });
    try {
      const argv = c.cmd.slice(6);
      const at = (flag: string, p: string) => argv.findIndex((a, i) => a === flag && argv[i + 1] === p && argv[i + 2] === p);
      expect(at("--bind", dir)).toBeGreaterThan(-1);
      expect(at("--bind", dir)).toBeLessThan(at("--ro-bind", path.join(dir, "keep.go")));
      expect(at("--bind", dir)).toBeLessThan(at("--ro-bind", path.join(dir, "sub")));
      // The folder comes before the state folder's runtime entries: one beside a target is writable again after it.
      expect(at("--bind", dir)).toBeLessThan(at("--bind", path.join(home, ".claude", "todos")));
      for (const t of writable) {
        expect(at("--bind", t)).toBe(-1);
        expect(at("--ro-bind", t)).toBe(-1);
      }
      expect(existsSync(path.join(dir, "new_test.go"))).toBe(false);
    } finally {
      c.release();
    }
  });

  it("refuses Claude Code's file target whose folder holds a symbolic link, saying to admit the folder or pass --hook-only, and leaves nothing behind", () => {
    const home = path.join(scratch, "home-argv-claude-link");
    mkdirSync(home);
    const dir = path.join(scratch, "argv-claude-link", "cart");
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, "cache.go"), "x");
    symlinkSync("../elsewhere", path.join(dir, "link"));
    // The sandbox's scratch folder goes under a temporary folder of this test's own, which other files running at the
    // same time do not use: it must be empty again after the refusal.
    const ownTmp = path.join(scratch, "tmp-argv-claude-link");
    mkdirSync(ownTmp);
    const tmpdir = process.env.TMPDIR;
    process.env.TMPDIR = ownTmp;
    try {
      expect(() =>
        confineCommand(chooseSandbox(["claude"], {}, present, byName), {
          cmd: ["claude"],
          env: { HOME: home },
          cwd: path.dirname(dir),
          writable: [path.join(dir, "cache.go"), path.join(dir, "new", "x.go")],
        }),
      ).toThrow(/link is a symbolic link beside the file target .*admit the folder .* or pass --hook-only/);
    } finally {
      if (tmpdir === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = tmpdir;
    }
    expect(existsSync(path.join(dir, "new"))).toBe(false);
    expect(readdirSync(ownTmp)).toEqual([]);
  });

  it("refuses a state folder that is the project or holds it, which would make the project writable", () => {
    const p = path.join(scratch, "state-is-project");
    mkdirSync(p);
    const choice = chooseSandbox(["codex"], {}, present, byName);
    expect(() => confineCommand(choice, { cmd: ["codex"], env: { CODEX_HOME: p }, cwd: p, writable: [] })).toThrow(
      /is or holds the project folder/,
    );
    expect(() => confineCommand(choice, { cmd: ["codex"], env: { CODEX_HOME: scratch }, cwd: p, writable: [] })).toThrow(/CODEX_HOME/);
  });

  it("runs the command as it is when no sandbox was chosen", () => {
    const c = confineCommand({ kind: "none", notes: [] }, { cmd: ["claude"], env: { A: "1" }, cwd: "/", writable: [] });
    expect(c.cmd).toEqual(["claude"]);
    expect(c.env).toEqual({ A: "1" });
  });
});

const bwrap = findBubblewrap();
describe.skipIf(!bwrap.ok)(`the sandbox, run here${bwrap.ok ? "" : ` (skipped: ${bwrap.reason})`}`, () => {
  it("lets a command write its targets, a new target included, and nothing else: not the project, not the state folder's configuration", () => {
    const p = path.join(scratch, "run");
    const home = path.join(scratch, "home-run");
    mkdirSync(path.join(p, "cart"), { recursive: true });
    mkdirSync(path.join(home, ".gemini"), { recursive: true });
    writeFileSync(path.join(home, ".gemini", "settings.json"), "{}");
    writeFileSync(path.join(p, "cart", "cache.go"), "before");
    const tool = path.join(scratch, "bin", "gemini");
    mkdirSync(path.dirname(tool));
    const script = [
      "#!/bin/sh",
      "echo in > cart/cache.go",
      "echo new > cart/new_test.go",
      "echo no > cart/other.go",
      "echo no > cart/cache.go.tmp",
      'echo no >> "$HOME/.gemini/settings.json"',
      'echo LD_PRELOAD=/x.so > "$HOME/.gemini/.env"',
      'echo no > "$HOME/.gemini/trustedFolders.json"',
      'mkdir -p "$HOME/.gemini/tmp/run/chats" && echo yes > "$HOME/.gemini/tmp/run/chats/session.json"',
      'echo yes > "$TMPDIR/t"',
      "exit 0",
    ].join("\n");
    writeFileSync(tool, `${script}\n`);
    chmodSync(tool, 0o755);
    const c = confineCommand(chooseSandbox([tool], {}, findBubblewrap, byName), {
      cmd: [tool],
      env: { PATH: process.env.PATH, HOME: home },
      cwd: p,
      writable: [path.join(p, "cart", "cache.go"), path.join(p, "cart", "new_test.go")],
    });
    try {
      const r = spawnSync(c.cmd[0] as string, c.cmd.slice(1), { env: c.env, cwd: p, encoding: "utf8" });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/cart\/other\.go: Read-only file system/);
      expect(readFileSync(path.join(p, "cart", "cache.go"), "utf8")).toBe("in\n");
      expect(readFileSync(path.join(p, "cart", "new_test.go"), "utf8")).toBe("new\n");
      expect(existsSync(path.join(p, "cart", "other.go"))).toBe(false);
      expect(existsSync(path.join(p, "cart", "cache.go.tmp"))).toBe(false);
      expect(readFileSync(path.join(home, ".gemini", "settings.json"), "utf8")).toBe("{}");
      expect(r.stderr).toMatch(/\.gemini\/\.env: Read-only file system/);
      expect(readFileSync(path.join(home, ".gemini", "tmp", "run", "chats", "session.json"), "utf8")).toBe("yes\n");
    } finally {
      c.release();
    }
    // .env and trustedFolders.json were not there: read-only in the session's private top level, never in the folder.
    expect(existsSync(path.join(home, ".gemini", ".env"))).toBe(false);
    expect(existsSync(path.join(home, ".gemini", "trustedFolders.json"))).toBe(false);
  });

  it("keeps /proc read-only, so a confined process cannot write the memory of one of the same user outside", () => {
    const outside = spawnSync("/bin/sh", ["-c", "sleep 30 >/dev/null 2>&1 & echo $!"], { encoding: "utf8" });
    const pid = outside.stdout.trim();
    try {
      const c = confineCommand(chooseSandbox(["/bin/sh"], { sandbox: true }, findBubblewrap, byName), {
        cmd: ["/bin/sh", "-c", `(exec 3>/proc/${pid}/mem) 2>/dev/null && echo opened || echo refused`],
        env: { PATH: process.env.PATH },
        cwd: scratch,
        writable: [],
      });
      try {
        const r = spawnSync(c.cmd[0] as string, c.cmd.slice(1), { env: c.env, encoding: "utf8" });
        expect(r.stdout.trim(), r.stderr).toBe("refused");
      } finally {
        c.release();
      }
    } finally {
      process.kill(Number(pid), "SIGKILL");
    }
  });

  it("refuses a confined process the host's file system through /proc/PID/root of a process outside, also when exec runs as root", () => {
    const outside = spawnSync("/bin/sh", ["-c", "sleep 30 >/dev/null 2>&1 & echo $!"], { encoding: "utf8" });
    const pid = outside.stdout.trim();
    const escaped = path.join(scratch, "escaped-proc-root.txt");
    try {
      const c = confineCommand(chooseSandbox(["/bin/sh"], { sandbox: true }, findBubblewrap, byName), {
        cmd: [
          "/bin/sh",
          "-c",
          `grep CapEff /proc/self/status; for p in ${pid} $PPID; do (echo x > /proc/$p/root${escaped}) 2>/dev/null && echo "opened $p" || echo refused; done`,
        ],
        env: { PATH: process.env.PATH },
        cwd: scratch,
        writable: [],
      });
      try {
        const r = spawnSync(c.cmd[0] as string, c.cmd.slice(1), { env: c.env, encoding: "utf8" });
        expect(r.stdout, r.stderr).toBe("CapEff:\t0000000000000000\nrefused\nrefused\n");
        expect(existsSync(escaped)).toBe(false);
      } finally {
        c.release();
      }
    } finally {
      process.kill(Number(pid), "SIGKILL");
    }
  });

  it("says when a parent's node_modules under /tmp is hidden from a script started in a subfolder, and not when the script's own folder holds it", () => {
    if (!scratch.startsWith("/tmp/")) return; // the case is a project under /tmp
    const project = path.join(scratch, "sdk-project");
    mkdirSync(path.join(project, "node_modules"), { recursive: true });
    mkdirSync(path.join(project, "agent"), { recursive: true });
    const target = path.join(project, "agent", "out.txt");
    writeFileSync(target, "");
    const confine = (cwd: string) =>
      confineCommand(chooseSandbox(["node"], { sandbox: true }, findBubblewrap, byName), {
        cmd: ["node", "agent.mjs"],
        env: { PATH: process.env.PATH },
        cwd,
        writable: [target],
      });
    const sub = confine(path.join(project, "agent"));
    try {
      expect(sub.notes.join("\n")).toContain(
        `twinlock: ${path.join(project, "node_modules")} is not visible in the sandbox (/tmp, /var/tmp, /run are private to it), so a node script started in ${path.join(project, "agent")} will not find the packages there`,
      );
    } finally {
      sub.release();
    }
    const top = confine(project);
    try {
      expect(top.notes.join("\n")).not.toContain("is not visible in the sandbox");
    } finally {
      top.release();
    }
  });

  it("reports nothing left in the sandbox after a plain sh -c that started nothing (bwrap's own init, still leaving, is not the command's)", async () => {
    const target = path.join(scratch, "plain-target.txt");
    writeFileSync(target, "");
    // bwrap's init was often still there as its command's end was reported: a few runs, each one must say nothing.
    for (let i = 0; i < 12; i++) {
      const c = confineCommand(chooseSandbox(["/bin/sh"], { sandbox: true }, findBubblewrap, byName), {
        cmd: ["/bin/sh", "-c", "true"],
        env: { PATH: process.env.PATH },
        cwd: scratch,
        writable: [target],
      });
      try {
        const child = spawn(c.cmd[0] as string, c.cmd.slice(1), { env: c.env, stdio: "ignore" });
        await new Promise((r) => child.on("exit", r));
        expect(c.reap()).toBeUndefined();
      } finally {
        c.release();
      }
    }
  });

  it("kills what the command left running in the sandbox (in a session of its own, in the background) before reap returns", async () => {
    const target = path.join(scratch, "survivor-target.txt");
    writeFileSync(target, "");
    // The command stays: once it ended, the end of its PID namespace's first process would kill the survivor before any reap.
    const c = confineCommand(chooseSandbox(["/bin/sh"], { sandbox: true }, findBubblewrap, byName), {
      cmd: [
        "/bin/sh",
        "-c",
        `setsid sh -c 'echo $$ > "$TMPDIR/pid"; while :; do echo late >> ${target}; sleep 0.05; done' </dev/null >/dev/null 2>&1 & ` +
          `until [ -s "$TMPDIR/pid" ]; do sleep 0.01; done; cp "$TMPDIR/pid" ${target}.pid; sleep 60`,
      ],
      env: { PATH: process.env.PATH },
      cwd: scratch,
      writable: [target, `${target}.pid`],
    });
    writeFileSync(`${target}.pid`, "");
    const child = spawn(c.cmd[0] as string, c.cmd.slice(1), { env: c.env, stdio: "ignore" });
    try {
      while (readFileSync(`${target}.pid`, "utf8") === "" && child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
      const info = readSandboxInfo(path.join(path.dirname(c.env.TMPDIR as string), "bwrap-info.json"));
      expect(info).toBeDefined();
      // The sandbox has a PID namespace of its own: the PID it wrote is the survivor's there.
      const survivor = outerPidOf(info?.pidNamespace, Number(readFileSync(`${target}.pid`, "utf8"))) as number;
      expect(survivor).toBeGreaterThan(1);
      // Before the reap, the survivor is still there, in the sandbox's mount namespace.
      expect(processesIn(info?.mountNamespace as number)).toContain(survivor);
      expect(c.reap()).toMatch(/left [0-9]+ process(es)? in the sandbox: killed before the session was unbound/);
      expect(processesIn(info?.mountNamespace as number)).toEqual([]);
      const state = (() => {
        try {
          return readFileSync(`/proc/${survivor}/stat`, "utf8").split(") ")[1]?.[0];
        } catch {
          return "gone";
        }
      })();
      expect(["gone", "Z"]).toContain(state);
      const after = readFileSync(target, "utf8");
      expect(c.reap()).toBeUndefined();
      expect(readFileSync(target, "utf8")).toBe(after);
    } finally {
      child.kill("SIGKILL");
      c.release();
    }
  });

  it("starts an npm-installed program under /tmp (a checkout there): its node_modules folder, sibling packages included, is readable again", () => {
    const root = realpathSync(mkdtempSync(path.join(os.tmpdir(), "twinlock-npm-cli-")));
    try {
      // node_modules/.bin/tool → ../tool/bin/tool.sh, which starts a sibling package's binary, as codex's script does.
      mkdirSync(path.join(root, "node_modules/.bin"), { recursive: true });
      mkdirSync(path.join(root, "node_modules/tool/bin"), { recursive: true });
      mkdirSync(path.join(root, "node_modules/tool-native/bin"), { recursive: true });
      writeFileSync(path.join(root, "node_modules/tool-native/bin/native"), "#!/bin/sh\necho native ran\n", { mode: 0o755 });
      writeFileSync(
        path.join(root, "node_modules/tool/bin/tool.sh"),
        `#!/bin/sh\nexec "$(dirname "$(readlink -f "$0")")/../../tool-native/bin/native"\n`,
        {
          mode: 0o755,
        },
      );
      symlinkSync("../tool/bin/tool.sh", path.join(root, "node_modules/.bin/tool"));
      writeFileSync(path.join(root, "sock-neighbour"), "");
      const program = path.join(root, "node_modules/.bin/tool");
      const c = confineCommand(chooseSandbox([program], { sandbox: true }, findBubblewrap, byName), {
        cmd: [program],
        env: { PATH: process.env.PATH },
        cwd: scratch,
        writable: [],
      });
      try {
        const r = spawnSync(c.cmd[0] as string, c.cmd.slice(1), { env: c.env, encoding: "utf8" });
        expect(r.stdout, r.stderr).toBe("native ran\n");
      } finally {
        c.release();
      }
      const look = confineCommand(chooseSandbox(["/bin/sh"], { sandbox: true }, findBubblewrap, byName), {
        cmd: ["/bin/sh", "-c", `${program}; test -e ${root}/sock-neighbour && echo beside || echo hidden`],
        env: { PATH: process.env.PATH },
        cwd: scratch,
        writable: [],
      });
      try {
        const r = spawnSync(look.cmd[0] as string, look.cmd.slice(1), { env: look.env, encoding: "utf8" });
        // A program named only inside the shell's script is not the command's: its folder stays hidden.
        expect(r.stdout, r.stderr).toMatch(/hidden\n$/);
      } finally {
        look.release();
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it.skipIf(!existsSync(PYTHON))(
    "kills a process whose main thread ended while another thread writes on (its leader a zombie, found by its threads)",
    async () => {
      const target = path.join(scratch, "ghost-target.txt");
      writeFileSync(target, "");
      writeFileSync(`${target}.pid`, "");
      // The attack: fork, a new session, a writing thread, then the main thread alone ends (SYS_exit), so /proc/PID/ns is unreadable.
      const program = [
        "import ctypes, os, sys, threading, time",
        "target, pidfile = sys.argv[1], sys.argv[2]",
        "if os.fork(): sys.exit(0)",
        "os.setsid()",
        "def write():",
        "    while True:",
        "        with open(target, 'a') as f: f.write('late\\n')",
        "        time.sleep(0.05)",
        "threading.Thread(target=write).start()",
        "time.sleep(0.2)",
        "with open(pidfile, 'w') as f: f.write(str(os.getpid()))",
        `ctypes.CDLL(None).syscall(${process.arch === "arm64" ? 93 : 60}, 0)`,
      ].join("\n");
      const c = confineCommand(chooseSandbox(["/bin/sh"], { sandbox: true }, findBubblewrap, byName), {
        cmd: [
          "/bin/sh",
          "-c",
          `${PYTHON} -c "$PROGRAM" ${target} ${target}.pid </dev/null >/dev/null 2>&1; until [ -s ${target}.pid ]; do sleep 0.01; done; sleep 60`,
        ],
        env: { PATH: process.env.PATH, PROGRAM: program },
        cwd: scratch,
        writable: [target, `${target}.pid`],
      });
      // The command stays, as above: its end would end the PID namespace, the ghost with it.
      const child = spawn(c.cmd[0] as string, c.cmd.slice(1), { env: c.env, stdio: "ignore" });
      try {
        while (readFileSync(`${target}.pid`, "utf8") === "" && child.exitCode === null) await new Promise((r) => setTimeout(r, 20));
        const info = readSandboxInfo(path.join(path.dirname(c.env.TMPDIR as string), "bwrap-info.json"));
        const ghost = outerPidOf(info?.pidNamespace, Number(readFileSync(`${target}.pid`, "utf8"))) as number;
        expect(ghost).toBeGreaterThan(1);
        // The leader is a zombie whose namespace cannot be read; a thread of it still runs.
        let leader = "";
        for (let i = 0; i < 200 && leader !== "Z"; i++) {
          leader = readFileSync(`/proc/${ghost}/stat`, "utf8").split(") ")[1]?.[0] ?? "";
          if (leader !== "Z") spawnSync("sleep", ["0.02"]);
        }
        expect(leader).toBe("Z");
        // What hid it from the old sweep: the leader's own namespace link cannot be read.
        expect(() => readlinkSync(`/proc/${ghost}/ns/mnt`)).toThrow();
        expect(processesIn(info?.mountNamespace as number)).toContain(ghost);
        expect(c.reap()).toMatch(/left [0-9]+ process(es)? in the sandbox: killed before the session was unbound/);
        expect(processesIn(info?.mountNamespace as number)).toEqual([]);
        const after = readFileSync(target, "utf8");
        spawnSync("sleep", ["0.2"]);
        expect(readFileSync(target, "utf8")).toBe(after);
      } finally {
        child.kill("SIGKILL");
        c.release();
      }
    },
  );
});

describe.skipIf(!bwrap.ok)(
  `what the sandbox hides from a confined process, run here${bwrap.ok ? "" : ` (skipped: ${bwrap.reason})`}`,
  () => {
    /** Run `script` with /bin/sh in the sandbox (--sandbox), with `env`; its stdout. */
    function inSandbox(script: string, env: NodeJS.ProcessEnv = {}, extra: { mcpSocket?: string } = {}) {
      return inSandboxSeeing(script, env, extra, () => ({}));
    }
    /** As inSandbox, with more variables that need the confined command (its watchdog's PID). */
    function inSandboxSeeing(
      script: string,
      env: NodeJS.ProcessEnv,
      extra: { mcpSocket?: string },
      more: (c: ReturnType<typeof confineCommand>) => NodeJS.ProcessEnv,
    ) {
      const c = confineCommand(chooseSandbox(["/bin/sh"], { sandbox: true }, findBubblewrap, byName), {
        cmd: ["/bin/sh", "-c", script],
        env: { PATH: process.env.PATH, ...env },
        cwd: scratch,
        writable: [],
        ...extra,
      });
      try {
        const r = spawnSync(c.cmd[0] as string, c.cmd.slice(1), { env: { ...c.env, ...more(c) }, encoding: "utf8" });
        return { ...r, c };
      } finally {
        c.release();
      }
    }
    /** A node one-liner that connects to the unix socket `p` and prints `connected` or the error's code. */
    const connect = (p: string) =>
      `${process.execPath} -e 'const s=require("net").connect(${JSON.stringify(p).replaceAll("'", "")});s.on("connect",()=>{console.log("connected");s.destroy()});s.on("error",e=>console.log(e.code))'`;

    it("hides unix sockets under /tmp, /run and the caller's XDG_RUNTIME_DIR (a tmux's, docker's, D-Bus's), and System V IPC", async () => {
      const net = await import("node:net");
      const tmux = mkdtempSync("/tmp/twinlock-test-tmux-");
      const runDir = mkdtempSync("/run/twinlock-test-");
      const xdg = mkdtempSync(path.join(os.homedir(), ".twinlock-test-xdg-"));
      const sockets = [path.join(tmux, "default"), path.join(runDir, "docker-like.sock"), path.join(xdg, "bus")];
      const servers = sockets.map((p) => net.createServer((s) => s.end()).listen(p));
      const queue = spawnSync("ipcmk", ["-Q"], { encoding: "utf8" }).stdout.match(/[0-9]+/)?.[0];
      try {
        await Promise.all(servers.map((s) => new Promise((resolve) => (s.listening ? resolve(null) : s.once("listening", resolve)))));
        // Outside, each answers: the test would pass for nothing if it did not.
        const outside = spawnSync("/bin/sh", ["-c", sockets.map(connect).join("; ")], { encoding: "utf8" });
        expect(outside.stdout).toBe("connected\nconnected\nconnected\n");
        expect(Number(spawnSync("/bin/sh", ["-c", "ipcs -q | grep -c '^0x'"], { encoding: "utf8" }).stdout)).toBeGreaterThan(0);
        const r = inSandbox(`${sockets.map(connect).join("; ")}; ipcs -q | grep -c '^0x' || true; echo "$XDG_RUNTIME_DIR"`, {
          XDG_RUNTIME_DIR: xdg,
        });
        const lines = r.stdout.trim().split("\n");
        expect(lines.slice(0, 3), r.stderr).toEqual(["ENOENT", "ENOENT", "ENOENT"]);
        expect(lines[3]).toBe("0");
        // Its own runtime folder is a private one.
        expect(lines[4]).toMatch(/twinlock-sandbox-.*\/run$/);
      } finally {
        for (const s of servers) s.close();
        if (queue) spawnSync("ipcrm", ["-q", queue]);
        rmSync(runDir, { recursive: true, force: true });
        rmSync(tmux, { recursive: true, force: true });
        rmSync(xdg, { recursive: true, force: true });
      }
    });

    it("still reaches an abstract unix socket (it shares the network, which the model's API needs): SECURITY.md says so", async () => {
      const net = await import("node:net");
      const name = `\0twinlock-test-${process.pid}-${Date.now()}`;
      const server = net.createServer((s) => s.end()).listen(name);
      try {
        await new Promise((resolve) => (server.listening ? resolve(null) : server.once("listening", resolve)));
        const r = inSandbox(
          `${process.execPath} -e 'const s=require("net").connect("\\0"+process.argv[1]);s.on("connect",()=>{console.log("connected");s.destroy()});s.on("error",e=>console.log(e.code))' ${name.slice(1)}`,
        );
        expect(r.stdout.trim(), r.stderr).toBe("connected");
      } finally {
        server.close();
      }
    });

    it("refuses a signal to exec's own process group when exec is not its leader (started by npx, npm or a shell without job control)", () => {
      const group = ownProcessGroup();
      const ps = spawnSync("ps", ["-o", "pgid=", "-p", String(process.pid)], { encoding: "utf8" }).stdout.trim();
      // The test runner's worker is no group leader: its group is the runner's.
      expect(group).toEqual(Number(ps) === process.pid ? [] : [Number(ps)]);
      // kill(-PGRP, 0) through node: a shell's `kill` builtin reads a negative number as a signal in some shells.
      const probe = (pgrp: number) =>
        `${process.execPath} -e 'try{process.kill(-${pgrp},0);console.log("reached")}catch(e){console.log(e.code)}'`;
      for (const pgrp of group) {
        const r = inSandbox(probe(pgrp));
        expect(r.stdout, r.stderr).toBe("EPERM\n");
        expect(spawnSync("/bin/sh", ["-c", probe(pgrp)], { encoding: "utf8" }).stdout).toBe("reached\n");
      }
    });

    it("refuses a signal to exec, to its watchdog (each as a process and a group) and to every process at once by the filter (EPERM); another process of the user outside is not there at all (ESRCH)", () => {
      const outside = spawnSync("/bin/sh", ["-c", "sleep 30 >/dev/null 2>&1 & echo $!"], { encoding: "utf8" });
      const other = outside.stdout.trim();
      // kill(PID, 0) through node, each target's error code: a shell's `kill -0 -- -N` may fail on its own parsing and prove nothing.
      // EPERM is the seccomp filter's answer; in the sandbox's PID namespace an unfiltered PID from outside names nothing (ESRCH).
      const probe = `${process.execPath} -e 'for (const p of process.argv.slice(1)) { try { process.kill(Number(p), 0); console.log("reached " + p) } catch (e) { console.log(e.code) } }'`;
      try {
        // The watchdog's PID is known only once confineCommand ran: the script reads it from its environment.
        const r = inSandboxSeeing(`${probe} ${process.pid} -${process.pid} "$WATCHDOG" "-$WATCHDOG" -1 ${other}`, {}, {}, (c) => ({
          WATCHDOG: String(c.watchdog),
        }));
        expect(r.stdout, r.stderr).toBe(`${"EPERM\n".repeat(5)}ESRCH\n`);
        // And outside, the same probe reaches exec and the other process: what refused them is the sandbox.
        expect(spawnSync("/bin/sh", ["-c", `${probe} ${process.pid} ${other}`], { encoding: "utf8" }).stdout).toBe(
          `reached ${process.pid}\nreached ${other}\n`,
        );
      } finally {
        process.kill(Number(other), "SIGKILL");
      }
    });

    it.skipIf(!existsSync(PYTHON))(
      "refuses the kernel's own signal path: a pipe set for asynchronous I/O cannot name an owner, so no SIGKILL reaches exec, its watchdog or anyone",
      () => {
        // The attack: F_SETOWN names the victim as the pipe's owner, F_SETSIG picks SIGKILL, O_ASYNC and a write make the kernel send it.
        const outside = spawn("/bin/sh", ["-c", "sleep 30"], { stdio: "ignore" });
        try {
          const script = [
            "import fcntl, os, sys",
            "r, w = os.pipe()",
            "for pid in [int(a) for a in sys.argv[1:]]:",
            "    for cmd in (fcntl.F_SETOWN, 10):",
            "        try:",
            "            fcntl.fcntl(r, cmd, pid if cmd == fcntl.F_SETOWN else 9); print('set', cmd, pid)",
            "        except PermissionError:",
            "            print('refused')",
            "fcntl.fcntl(r, fcntl.F_SETFL, os.O_ASYNC | os.O_NONBLOCK); os.write(w, b'x')",
            "print('flags', fcntl.fcntl(r, fcntl.F_GETFL) & os.O_ASYNC != 0)",
          ].join("\n");
          const r = inSandboxSeeing(`${PYTHON} -c "$PROGRAM" ${process.pid} "$WATCHDOG" ${outside.pid}`, { PROGRAM: script }, {}, (c) => ({
            WATCHDOG: String(c.watchdog),
          }));
          expect(r.stdout, r.stderr).toBe(`${"refused\n".repeat(6)}flags True\n`);
          expect(outside.exitCode).toBeNull();
          expect(() => process.kill(outside.pid as number, 0)).not.toThrow();
        } finally {
          outside.kill("SIGKILL");
        }
      },
    );
  },
);

describe.skipIf(!bwrap.ok)(
  `Claude Code's state, shared state folders and the MCP relay, run here${bwrap.ok ? "" : ` (skipped: ${bwrap.reason})`}`,
  () => {
    it("gives Claude Code its project's transcripts writable but its settings, instructions and extensions read-only, and a private ~/.claude.json thrown away after", () => {
      const home = path.join(scratch, "home-claude");
      mkdirSync(path.join(home, ".claude", "commands"), { recursive: true });
      writeFileSync(path.join(home, ".claude.json"), '{"numStartups":1}\n');
      const settings = '{"hooks":{"PreToolUse":[{"matcher":"*","hooks":[{"type":"command","command":"twinlock hook claude"}]}]}}\n';
      writeFileSync(path.join(home, ".claude", "settings.json"), settings);
      const tool = path.join(scratch, "bin-claude", "claude");
      mkdirSync(path.dirname(tool));
      writeFileSync(
        tool,
        [
          "#!/bin/sh",
          'echo "{}" > "$HOME/.claude/settings.json"',
          'echo "x" > "$HOME/.claude/commands/evil.md"',
          'echo "x" > "$HOME/.claude/CLAUDE.md"',
          'echo "x" > "$HOME/.claude/statusline.sh"',
          'echo yes > "$HOME/.claude/projects/$(pwd | tr -c "a-zA-Z0-9\\n" -)/session.jsonl"',
          'echo \'{"mcpServers":{"x":{"command":"/bin/sh"}}}\' > "$HOME/.claude.json"',
          'cat "$HOME/.claude.json"',
          "exit 0",
          "",
        ].join("\n"),
      );
      chmodSync(tool, 0o755);
      const project = path.join(scratch, "project-claude");
      mkdirSync(project);
      const c = confineCommand(chooseSandbox([tool], {}, findBubblewrap, byName), {
        cmd: [tool],
        env: { PATH: process.env.PATH, HOME: home },
        cwd: project,
        writable: [],
      });
      try {
        expect(c.notes.join("\n")).toContain(`a private copy of ${path.join(home, ".claude.json")} (thrown away after)`);
        const r = spawnSync(c.cmd[0] as string, c.cmd.slice(1), { env: c.env, cwd: project, encoding: "utf8" });
        expect(r.status, r.stderr).toBe(0);
        // Inside, it wrote its private copy.
        expect(r.stdout).toContain("mcpServers");
        for (const f of ["settings.json", "commands/evil.md", "CLAUDE.md"])
          expect(r.stderr).toMatch(new RegExp(`\\.claude/${f}: Read-only file system`));
        expect(readFileSync(path.join(home, ".claude", "projects", project.replace(/[^a-zA-Z0-9]/g, "-"), "session.jsonl"), "utf8")).toBe(
          "yes\n",
        );
      } finally {
        c.release();
      }
      expect(readFileSync(path.join(home, ".claude", "settings.json"), "utf8")).toBe(settings);
      expect(readFileSync(path.join(home, ".claude.json"), "utf8")).toBe('{"numStartups":1}\n');
      // CLAUDE.md was not there: a read-only stand-in for the session, removed after.
      expect(existsSync(path.join(home, ".claude", "CLAUDE.md"))).toBe(false);
      expect(existsSync(path.join(home, ".claude", "commands", "evil.md"))).toBe(false);
    });

    it("lets Claude Code replace a file target by a temporary file renamed over it, and make a new one with no placeholder to Read first, through the target's folder, whose other entries it cannot write, remove or rename; a new name beside a target is named after", () => {
      const p = path.join(scratch, "run-claude");
      const home = path.join(scratch, "home-claude-targets");
      mkdirSync(path.join(p, "cart", "sub"), { recursive: true });
      mkdirSync(home);
      writeFileSync(path.join(p, "cart", "cache.go"), "before");
      writeFileSync(path.join(p, "cart", "keep.go"), "kept");
      writeFileSync(path.join(p, "cart", "sub", "deep.go"), "kept");
      const tool = path.join(scratch, "bin-claude-targets", "claude");
      mkdirSync(path.dirname(tool));
      const script = [
        "#!/bin/sh",
        "test -e cart/new_test.go && echo placeholder >&2",
        // As Claude Code's Write and Edit do: a temporary file beside the target, renamed over it.
        "echo in > cart/cache.go.tmp.1 && mv cart/cache.go.tmp.1 cart/cache.go",
        "echo new > cart/new_test.go.tmp.2 && mv cart/new_test.go.tmp.2 cart/new_test.go",
        "echo no >> cart/keep.go",
        "rm -f cart/keep.go",
        "mv cart/keep.go cart/moved.go",
        "echo no > cart/swap.tmp; mv cart/swap.tmp cart/keep.go",
        "rm -rf cart/sub",
        "echo no > cart/sub/deep.go",
        "echo no > top.go",
        "echo stray > cart/other.go",
        "exit 0",
      ].join("\n");
      writeFileSync(tool, `${script}\n`);
      chmodSync(tool, 0o755);
      const c = confineCommand(chooseSandbox([tool], {}, findBubblewrap, byName), {
        cmd: [tool],
        env: { PATH: process.env.PATH, HOME: home },
        cwd: p,
        writable: [path.join(p, "cart", "cache.go"), path.join(p, "cart", "new_test.go")],
      });
      let notes: string[] = [];
      try {
        expect(c.notes.join("\n")).toContain(`new names beside the file targets in ${path.join(p, "cart")} (listed after`);
        const r = spawnSync(c.cmd[0] as string, c.cmd.slice(1), { env: c.env, cwd: p, encoding: "utf8" });
        expect(r.status, r.stderr).toBe(0);
        expect(r.stderr).not.toContain("placeholder");
        expect(readFileSync(path.join(p, "cart", "cache.go"), "utf8")).toBe("in\n");
        expect(readFileSync(path.join(p, "cart", "new_test.go"), "utf8")).toBe("new\n");
        expect(r.stderr).toMatch(/cart\/keep\.go: Read-only file system/);
        expect(r.stderr).toMatch(/cart\/keep\.go.*(Device or resource busy|Resource busy)/);
        expect(readFileSync(path.join(p, "cart", "keep.go"), "utf8")).toBe("kept");
        expect(existsSync(path.join(p, "cart", "moved.go"))).toBe(false);
        expect(readFileSync(path.join(p, "cart", "sub", "deep.go"), "utf8")).toBe("kept");
        expect(r.stderr).toMatch(/top\.go: Read-only file system/);
        expect(existsSync(path.join(p, "top.go"))).toBe(false);
        // The one power the folder's mount adds, a new name, is there, and named for the person.
        expect(readFileSync(path.join(p, "cart", "other.go"), "utf8")).toBe("stray\n");
      } finally {
        notes = c.release();
      }
      expect(notes).toEqual([
        `twinlock: ${tool} left 2 new entries beside the file targets that are no target: ${path.join(p, "cart", "other.go")}, ${path.join(p, "cart", "swap.tmp")} (not a target: in the change close records, close --result verified refuses it as outside the plan)`,
      ]);
    });

    it("keeps the stand-in for ~/.claude.json two sessions on one HOME share until the last ends: the second starts and runs after the first ended", () => {
      const home = path.join(scratch, "shared-claude-home");
      mkdirSync(home);
      const tool = path.join(scratch, "bin-shared-claude", "claude");
      mkdirSync(path.dirname(tool));
      // What Claude Code does with its ~/.claude.json (a private copy mounted over the stand-in); its settings stay read-only.
      writeFileSync(
        tool,
        '#!/bin/sh\necho "{}" > "$HOME/.claude.json" && cat "$HOME/.claude.json"; echo "{}" > "$HOME/.claude/settings.json"; echo ran\n',
      );
      chmodSync(tool, 0o755);
      const project = path.join(scratch, "project-shared-claude");
      mkdirSync(project);
      const start = () =>
        confineCommand(chooseSandbox([tool], {}, findBubblewrap, byName), {
          cmd: [tool],
          env: { PATH: process.env.PATH, HOME: home },
          cwd: project,
          writable: [],
        });
      const a = start();
      let b: ReturnType<typeof confineCommand> | undefined;
      try {
        expect(a.notes.join("\n")).toMatch(/\.claude\.json is not there yet: an empty one is in place for the session/);
        b = start();
        // The second found the first's stand-in: it made none of its own.
        expect(b.notes.join("\n")).not.toMatch(/not there yet/);
        a.release();
        expect(readFileSync(path.join(home, ".claude.json"), "utf8")).toBe("");
        const r = spawnSync(b.cmd[0] as string, b.cmd.slice(1), { env: b.env, cwd: project, encoding: "utf8" });
        expect(r.stdout, r.stderr).toBe("{}\nran\n");
        expect(r.stderr).toMatch(/\.claude\/settings\.json: Read-only file system/);
      } finally {
        a.release();
        b?.release();
      }
      // The last one out removed the stand-in, and the registry's entries; no configuration was made.
      expect(existsSync(path.join(home, ".claude.json"))).toBe(false);
      expect(existsSync(path.join(home, ".claude", "settings.json"))).toBe(false);
      expect(readdirSync(path.join(home, ".claude", ".twinlock-stand-ins"))).toEqual([]);
    });

    it("joins a confined `twinlock mcp` to the session's server outside through the relay mounted at /run/twinlock/mcp.sock", async () => {
      // The session's server here: one that answers each line with it reversed, started outside for each connection.
      const relay = await startMcpRelay(
        [
          process.execPath,
          "-e",
          'require("readline").createInterface({input:process.stdin}).on("line",l=>console.log([...l].reverse().join("")))',
        ],
        { PATH: process.env.PATH },
      );
      try {
        const c = confineCommand(chooseSandbox(["/bin/sh"], { sandbox: true }, findBubblewrap, byName), {
          cmd: [
            "/bin/sh",
            "-c",
            `ls -l ${SANDBOX_MCP_SOCKET} | cut -c1; ${process.execPath} -e 'const s=require("net").connect(process.argv[1]);s.on("data",d=>{process.stdout.write(d);s.destroy()});s.write("olleh\\n")' ${SANDBOX_MCP_SOCKET}`,
          ],
          env: { PATH: process.env.PATH },
          cwd: scratch,
          writable: [],
          mcpSocket: relay.socket,
        });
        try {
          const r = await new Promise<{ stdout: string; stderr: string }>((resolve) => {
            const child = spawn(c.cmd[0] as string, c.cmd.slice(1), { env: c.env });
            let stdout = "";
            let stderr = "";
            child.stdout.on("data", (d) => (stdout += d));
            child.stderr.on("data", (d) => (stderr += d));
            child.on("close", () => resolve({ stdout, stderr }));
          });
          expect(r.stdout, r.stderr).toBe("s\nhello\n");
        } finally {
          c.release();
        }
      } finally {
        await relay.close();
      }
      expect(existsSync(relay.socket)).toBe(false);
    });
  },
);

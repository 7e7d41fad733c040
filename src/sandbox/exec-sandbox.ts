import {
  closeSync,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { RefusalError, UsageError } from "../errors/errors.js";
import { isWithin, resolveRealPath } from "../input/resolve-real-path.js";
import { type FailOpenTool, failOpenToolOf, toolArgumentsAt } from "./agent-tool.js";
import { bubblewrapArgv } from "./bubblewrap-argv.js";
import { type Bubblewrap, findBubblewrap } from "./find-bubblewrap.js";
import { readSandboxInfo, reapSandbox } from "./reap-sandbox.js";
import { seccompFilter } from "./seccomp-filter.js";
import { prepareTargets } from "./target-placeholders.js";
import { toolStateOf } from "./tool-state.js";

/** How a session's command is to be run: as it is, or in bubblewrap. */
export type SandboxChoice =
  | { kind: "none"; notes: string[] }
  | { kind: "bubblewrap"; bwrap: string; seccomp: Buffer; tool: FailOpenTool | undefined };

/** The two flags of `exec` (and `plan`) that choose: `--hook-only` (no sandbox) and `--sandbox` (a sandbox for any command). */
export interface SandboxFlags {
  hookOnly?: boolean;
  sandbox?: boolean;
}

/**
 * Decide, before anything is admitted, how `cmd` will run. Codex CLI and
 * Gemini CLI let a call through when the hook fails (exit 127, a signal, a
 * timeout): they run in the sandbox, which keeps their writes to the
 * admitted targets whatever the hook does. Other commands (Claude Code,
 * which blocks on every failure with `onFailure: "block"`; anything else)
 * run as they are unless `--sandbox` asks for it. Refused, with what to do,
 * when the sandbox is needed and cannot be made here; `--hook-only` runs
 * without it, and says what that gives up.
 */
export function chooseSandbox(
  cmd: readonly string[],
  flags: SandboxFlags,
  find: () => Bubblewrap = findBubblewrap,
  where: { env: NodeJS.ProcessEnv; cwd: string } = { env: process.env, cwd: process.cwd() },
): SandboxChoice {
  if (flags.hookOnly && flags.sandbox) throw new UsageError("--hook-only and --sandbox contradict each other: pass one of them");
  const tool = failOpenToolOf(cmd);
  if (flags.hookOnly)
    return {
      kind: "none",
      notes: [
        tool
          ? `twinlock: --hook-only: ${tool} runs without exec's sandbox, held by the hook alone; when the hook fails (not found, killed, timed out) ${tool} runs the call anyway`
          : `twinlock: --hook-only: ${cmd[0]} runs without exec's sandbox, held by the hook alone`,
      ],
    };
  if (!tool && !flags.sandbox) return { kind: "none", notes: [] };
  const who = tool ?? cmd[0];
  const why = tool
    ? `${tool} runs a call when the hook fails (not found, killed, timed out), so exec runs it in a bubblewrap sandbox that keeps its writes to the admitted targets`
    : `--sandbox asks exec to run ${who} in a bubblewrap sandbox`;
  const bwrap = find();
  const todo =
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), run the executor under an OS user of its own (SECURITY.md, Another OS user), or pass --hook-only to rely on the hook alone";
  if (!bwrap.ok) throw new UsageError(`${why}, and ${bwrap.reason}: ${todo}`);
  const seccomp = seccompFilter();
  if (!seccomp) throw new UsageError(`${why}, and its seccomp filter knows no system calls of ${process.arch}: ${todo}`);
  if (tool) checkStateFolder(tool, toolStateOf(tool, where.env).dir, where.cwd);
  return { kind: "bubblewrap", bwrap: bwrap.path, seccomp, tool };
}

/** Refuse a state folder that is (or links to) the project, or holds it: mounted writable, it would make the project writable. */
function checkStateFolder(tool: FailOpenTool, dir: string, cwd: string): void {
  const real = resolveRealPath(dir, "/");
  const project = resolveRealPath(cwd, "/");
  if (isWithin(real, project) || isWithin(project, real))
    throw new UsageError(
      `${tool}'s state folder ${dir} is or holds the project folder ${cwd}, so the sandbox cannot keep the project read-only: point ${tool === "codex" ? "CODEX_HOME" : "GEMINI_CLI_HOME"} (or HOME) elsewhere`,
    );
}

/** The command to start in place of the session's own, with its environment, and what to undo once it ended. */
export interface ConfinedCommand {
  cmd: string[];
  env: NodeJS.ProcessEnv;
  notes: string[];
  /**
   * Once the command ended (however it ended): kill every process still in
   * the sandbox and wait until none is left, so none writes a target or the
   * state folder, or reads the terminal, after exec reports the end. Returns
   * a note for the person when it killed any (undefined otherwise).
   */
  reap(): string | undefined;
  /** Reap, then remove what was made for the sandbox: empty placeholders, the private scratch folder. */
  release(): void;
}

/**
 * The argv and environment that run `cmd` as `choice` says. In bubblewrap
 * the whole file system is read-only but for `writable` (the admitted
 * targets' real paths; a target not there yet gets a placeholder), the
 * tool's state folder (its configuration read-only), and a private TMPDIR
 * and XDG_CACHE_HOME. Codex is started with its own sandbox off
 * (`-c sandbox_mode="danger-full-access"`): its bubblewrap cannot nest in
 * this one (it writes /proc, read-only here), and this one confines what it
 * would have.
 */
export function confineCommand(
  choice: SandboxChoice,
  input: { cmd: readonly string[]; env: NodeJS.ProcessEnv; cwd: string; writable: readonly string[] },
): ConfinedCommand {
  if (choice.kind === "none") return { cmd: [...input.cmd], env: input.env, notes: choice.notes, reap: () => undefined, release: () => {} };
  const scratch = mkdtempSync(path.join(os.tmpdir(), "twinlock-sandbox-"));
  // bwrap writes its child's PID and mount namespace here (outside every writable path; its descriptor is closed inside).
  const infoFile = path.join(scratch, "bwrap-info.json");
  let prepared: ReturnType<typeof prepareTargets> | undefined;
  const configStandIns: StandIn[] = [];
  const reap = () => {
    const info = readSandboxInfo(infoFile);
    if (!info) return undefined;
    const killed = reapSandbox(info);
    return killed
      ? `twinlock: ${input.cmd[0]} ended and left ${killed} process${killed === 1 ? "" : "es"} in the sandbox: killed before the session was unbound`
      : undefined;
  };
  const release = () => {
    try {
      reap();
    } finally {
      prepared?.undo();
      removeStandIns(configStandIns);
      rmSync(scratch, { recursive: true, force: true });
    }
  };
  try {
    const tmp = path.join(scratch, "tmp");
    const cache = path.join(scratch, "cache");
    for (const d of [tmp, cache]) mkdirSync(d);
    const filter = path.join(scratch, "seccomp.bpf");
    writeFileSync(filter, choice.seccomp, { mode: 0o600 });
    try {
      prepared = prepareTargets(input.writable);
    } catch (error) {
      throw new RefusalError(
        `the sandbox cannot mount a target writable (${(error as Error).message}); the session is ended: remove what is in the target's way and run exec again`,
        { attack: "target-moved-before-sandbox" },
        { cause: error },
      );
    }
    const state = choice.tool ? [toolStateOf(choice.tool, input.env)] : [];
    const mounts = state.map((s) => {
      mkdirSync(s.dir, { recursive: true });
      checkStateFolder(choice.tool as FailOpenTool, s.dir, input.cwd);
      for (const f of s.configFiles) {
        const stand = makeStandIn(path.join(s.dir, f.name), f.content);
        if (stand) configStandIns.push(stand);
      }
      return {
        dir: s.dir,
        readOnly: readdirSync(s.dir)
          .filter((n) => s.isConfig(n))
          .map((n) => path.join(s.dir, n)),
      };
    });
    const at = toolArgumentsAt(input.cmd);
    const inner =
      choice.tool === "codex"
        ? [...input.cmd.slice(0, at), "-c", 'sandbox_mode="danger-full-access"', ...input.cmd.slice(at)]
        : [...input.cmd];
    const argv = bubblewrapArgv({
      bwrap: choice.bwrap,
      cmd: inner,
      cwd: input.cwd,
      writable: [...prepared.paths, tmp, cache],
      state: mounts,
      seccompFd: 3,
      infoFd: 4,
    });
    const where = prepared.paths.length ? prepared.paths.join(", ") : "none";
    return {
      // /bin/sh opens the filter as descriptor 3, the info file as 4, and becomes bwrap (the same process: signals reach it as they would).
      cmd: ["/bin/sh", "-c", 'f=$1; i=$2; shift 2; exec "$@" 3<"$f" 4>"$i"', "twinlock-sandbox", filter, infoFile, ...argv],
      env: { ...input.env, TMPDIR: tmp, XDG_CACHE_HOME: cache },
      notes: [
        ...prepared.notes,
        ...(configStandIns.length
          ? [
              `twinlock: ${configStandIns.map((f) => f.path).join(", ")} ${configStandIns.length === 1 ? "is" : "are"} not there yet: an empty one is in place, read-only, for the session (removed after, if left as it is)`,
            ]
          : []),
        `twinlock: ${input.cmd[0]} runs in a bubblewrap sandbox: it may write only the admitted targets (${where})${mounts.length ? `, its state folder ${mounts.map((m) => m.dir).join(", ")} (its configuration read-only)` : ""} and a private TMPDIR`,
      ],
      reap,
      release,
    };
  } catch (error) {
    release();
    throw error;
  }
}

/** A configuration file exec put in place for the session, so that the sandbox mounts it read-only. */
interface StandIn {
  path: string;
  content: string;
  dev: number;
  ino: number;
}

/** Make `file` with `content` when nothing is there (not even a link), or undefined when something is. */
function makeStandIn(file: string, content: string): StandIn | undefined {
  try {
    lstatSync(file);
    return undefined;
  } catch {
    // not there: made below
  }
  const fd = openSync(file, "wx", 0o644);
  try {
    writeFileSync(fd, content);
    const st = fstatSync(fd);
    return { path: file, content, dev: st.dev, ino: st.ino };
  } finally {
    closeSync(fd);
  }
}

/** Remove each stand-in that is still the one exec made, as exec made it (one replaced since is the person's: kept). */
function removeStandIns(standIns: readonly StandIn[]): void {
  for (const s of standIns) {
    try {
      const st = lstatSync(s.path);
      if (st.isFile() && st.dev === s.dev && st.ino === s.ino && readFileSync(s.path, "utf8") === s.content) unlinkSync(s.path);
    } catch {
      // gone already
    }
  }
}

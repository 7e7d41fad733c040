import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { RefusalError, UsageError } from "../errors/errors.js";
import type { BindingProcess } from "../home/session-binding.js";
import { isWithin, resolveRealPath } from "../input/resolve-real-path.js";
import { PACKAGE_ROOT } from "../package-root.js";
import { type AgentTool, agentToolOf } from "./agent-tool.js";
import { bubblewrapArgv } from "./bubblewrap-argv.js";
import { type Bubblewrap, findBubblewrap } from "./find-bubblewrap.js";
import { identifyAgentTool, type ProgramIdentity } from "./identify-agent-tool.js";
import { SANDBOX_MCP_SOCKET } from "./mcp-relay.js";
import { readSandboxInfo, reapSandbox } from "./reap-sandbox.js";
import { SANDBOX_ENV } from "./sandbox-env.js";
import { removeSandboxRecord, writeSandboxRecord } from "./sandbox-record.js";
import { startWatchdog } from "./sandbox-watchdog.js";
import { seccompFilter } from "./seccomp-filter.js";
import { makeStandIn, StandInRegistry } from "./stand-ins.js";
import { newEntries, type ParentMount, targetMounts } from "./target-parents.js";
import { prepareTargets } from "./target-placeholders.js";
import { type ToolState, toolStateOf } from "./tool-state.js";

/** How a session's command is to be run: as it is, or in bubblewrap. */
export type SandboxChoice =
  | { kind: "none"; notes: string[] }
  | {
      kind: "bubblewrap";
      bwrap: string;
      seccomp: Buffer;
      tool: AgentTool | undefined;
      /** Where in the command the tool's own arguments begin (identifyAgentTool). */
      argsAt: number;
    };

/** The two flags of `exec` (and `plan`) that choose: `--hook-only` (no sandbox) and `--sandbox` (a sandbox for any command). */
export interface SandboxFlags {
  hookOnly?: boolean;
  sandbox?: boolean;
}

/** Which command binds the session: `exec` (an executor, its admitted targets writable) or `plan` (a planner, its handoff folder). */
export type Binder = "exec" | "plan";

/** What the sandbox leaves writable, in words, for each binder. */
const WRITABLE_IN_WORDS: Record<Binder, string> = { exec: "the admitted targets", plan: "its handoff folder" };

/** Why each agent tool runs in the sandbox without being asked, and what `--hook-only` gives up with it. */
const WHY_SANDBOXED: Record<AgentTool, { why: string; lost: string }> = {
  claude: {
    why: "claude's shell commands pass the hook, which cannot see what they write",
    lost: "a shell command the hook lets through may write any file the user can",
  },
  codex: {
    why: "codex runs a call when the hook fails (not found, killed, timed out)",
    lost: "when the hook fails (not found, killed, timed out) codex runs the call anyway",
  },
  gemini: {
    why: "gemini runs a call when the hook fails (killed, timed out)",
    lost: "when the hook fails (killed, timed out) gemini runs the call anyway",
  },
};

/**
 * Decide, before anything is admitted, how `cmd` will run. Claude Code,
 * Codex CLI and Gemini CLI run in the sandbox, which keeps their writes to
 * the admitted targets (under `plan`: the handoff folder) whatever the hook
 * says or fails to say: Codex and Gemini let a call through when the hook
 * fails (exit 127, a signal, a timeout), and the hook lets Claude Code's
 * shell commands through without seeing what they write. Other commands
 * The tool is what the program really is (`identifyAgentTool`: found on
 * PATH, its links followed, its first bytes read), not what it is called.
 * A command that is none of the three (a wrapper script, `env` of one, any
 * other program) is refused, in one line naming the tools and how to start
 * one directly, unless `--sandbox` runs it in the sandbox or `--hook-only`
 * without it. Refused, with what to do, when the sandbox is needed and
 * cannot be made here; `--hook-only` runs without it, and says what that
 * gives up.
 */
export function chooseSandbox(
  cmd: readonly string[],
  flags: SandboxFlags,
  find: () => Bubblewrap = findBubblewrap,
  where: {
    env: NodeJS.ProcessEnv;
    cwd: string;
    binder?: Binder;
    /** How the program is identified (default: identifyAgentTool, with `env`'s PATH and `cwd`). */
    identify?: (cmd: readonly string[]) => ProgramIdentity;
  } = { env: process.env, cwd: process.cwd() },
): SandboxChoice {
  if (flags.hookOnly && flags.sandbox) throw new UsageError("--hook-only and --sandbox contradict each other: pass one of them");
  const binder = where.binder ?? "exec";
  const identity = where.identify ? where.identify(cmd) : identifyAgentTool(cmd, where);
  const tool = identity.tool;
  if (flags.hookOnly)
    return {
      kind: "none",
      notes: [
        tool
          ? `twinlock: --hook-only: ${tool} runs without ${binder}'s sandbox, held by the hook alone; ${WHY_SANDBOXED[tool].lost}`
          : `twinlock: --hook-only: ${cmd[0]} runs without ${binder}'s sandbox, held by the hook alone`,
      ],
    };
  if (!tool && !flags.sandbox) throw new UsageError(unidentifiedLine(cmd, identity, binder));
  const who = tool ?? cmd[0];
  const why = tool
    ? `${WHY_SANDBOXED[tool].why}, so ${binder} runs it in a bubblewrap sandbox that keeps its writes to ${WRITABLE_IN_WORDS[binder]}`
    : `--sandbox asks ${binder} to run ${who} in a bubblewrap sandbox`;
  const bwrap = find();
  const todo =
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap), run the executor under an OS user of its own (SECURITY.md, Another OS user), or pass --hook-only to rely on the hook alone";
  if (!bwrap.ok) throw new UsageError(`${why}, and ${bwrap.reason}: ${todo}`);
  const seccomp = seccompFilter();
  if (!seccomp) throw new UsageError(`${why}, and its seccomp filter knows no system calls of ${process.arch}: ${todo}`);
  if (tool) {
    const state = toolStateOf(tool, where.env);
    checkStateFolder(tool, state.dir, where.cwd, state.variable);
  }
  return { kind: "bubblewrap", bwrap: bwrap.path, seccomp, tool, argsAt: tool ? identity.argsAt : 1 };
}

/** The tools by the names a person knows them, and how each is started so that exec can tell it. */
const SUPPORTED =
  "Claude Code, Codex CLI and Gemini CLI, started by their own program (claude, codex, gemini on PATH; a release binary; node …/node_modules/@openai/codex/bin/codex.js; npx @openai/codex)";

/** The one line that refuses a command that is none of the agent tools. */
function unidentifiedLine(cmd: readonly string[], identity: ProgramIdentity, binder: Binder): string {
  const claimed = agentToolOf(cmd);
  const seen = claimed ? `${cmd[0]} is named like ${claimed} but is ${identity.what}` : `${cmd[0]} is ${identity.what}`;
  return `${binder} cannot tell which agent tool it would run: ${seen}; ${binder} confines ${SUPPORTED}: start the tool's own program directly, or pass --sandbox to run this command confined to ${WRITABLE_IN_WORDS[binder]}, or --hook-only to run it held by the hook alone`;
}

/**
 * Whether `tool`'s file targets are mounted through their folders (Claude
 * Code's Write and Edit rename a temporary file over the target) rather
 * than alone (Codex and Gemini write a file target in place).
 */
function mountsThroughFolders(tool: AgentTool | undefined): boolean {
  return tool === "claude";
}

/**
 * Refuse, before the admission uses the consent, targets the sandbox of
 * `choice` could not mount (`targetMounts`: a file target's folder holding
 * more entries than its budget, or a symbolic link), with the same line
 * `confineCommand` would give after it. Reads only; `confineCommand` checks
 * the targets again as they are then. A new target whose folder is not
 * there yet is left out: that folder is made empty for it.
 */
export function requireMountableTargets(choice: SandboxChoice, targets: readonly string[]): void {
  if (choice.kind !== "bubblewrap") return;
  targetMounts(
    targets.filter((t) => existsSync(path.dirname(t))),
    mountsThroughFolders(choice.tool),
  );
}

/** Refuse a state folder that is (or links to) the project, or holds it: mounted writable, it would make the project writable. */
function checkStateFolder(tool: AgentTool, dir: string, cwd: string, variable: string): void {
  const real = resolveRealPath(dir, "/");
  const project = resolveRealPath(cwd, "/");
  if (isWithin(real, project) || isWithin(project, real))
    throw new UsageError(
      `${tool}'s state folder ${dir} is or holds the project folder ${cwd}, so the sandbox cannot keep the project read-only: point ${variable} (or HOME) elsewhere`,
    );
}

/** The folders the sandbox hides behind empty private ones: where other programs keep their sockets (tmux, docker, D-Bus). */
const HIDDEN = ["/tmp", "/var/tmp", "/run"];

/** Whether `p` is `dir` or inside it. */
const under = (p: string, dir: string) => p === dir || p.startsWith(`${dir}/`);

/**
 * Of `paths`, the existing real ones under a hidden folder, each once and
 * none inside another: what the command still reads there (its working
 * folder, HOME, the gate home, its own program) is mounted read-only again.
 */
function readableUnder(hidden: readonly string[], paths: readonly (string | undefined)[]): string[] {
  const real = new Set<string>();
  for (const p of paths) {
    if (p === undefined || !path.isAbsolute(p)) continue;
    let r: string;
    try {
      r = resolveRealPath(p, "/");
      lstatSync(r);
    } catch {
      continue;
    }
    if (hidden.some((h) => under(r, h))) real.add(r);
  }
  const all = [...real].sort();
  return all.filter((p) => !all.some((q) => q !== p && under(p, q)));
}

/**
 * The node_modules folder a program of the command lies in, as named and as
 * its real path: an npm-installed agent CLI (`node_modules/.bin/codex`, a
 * link to a script that starts a sibling package's native binary) needs the
 * whole folder, not only the file, when it sits under a hidden folder (a
 * checkout in /tmp). Nothing for a program outside one.
 */
function packageFolders(p: string): string[] {
  if (!path.isAbsolute(p)) return [];
  let real: string | undefined;
  try {
    real = resolveRealPath(p, "/");
  } catch {
    real = undefined;
  }
  return [p, real].flatMap((q) => {
    const at = q === undefined ? -1 : q.indexOf("/node_modules/");
    return q !== undefined && at > 0 ? [q.slice(0, at + "/node_modules".length)] : [];
  });
}

/**
 * The `node_modules` folders in the parents of `cwd` that the sandbox hides
 * (inside a private folder, `/tmp` say, and mounted by none of `readable`):
 * a node script started in `cwd` looks there for its packages and will not
 * find them. Only read for a note; a parent that cannot be read is skipped.
 */
function hiddenParentPackages(cwd: string, hidden: readonly string[], readable: readonly string[]): string[] {
  const found: string[] = [];
  let dir = path.dirname(path.resolve(cwd));
  for (let i = 0; i < 64 && hidden.some((h) => under(dir, h) && dir !== h); i++) {
    const modules = path.join(dir, "node_modules");
    try {
      if (lstatSync(modules).isDirectory() && !readable.some((r) => under(modules, r))) found.push(modules);
    } catch {
      // not there, or unreadable: nothing to say
    }
    dir = path.dirname(dir);
  }
  return found;
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
  /**
   * Reap, then remove what was made for the sandbox (empty folders made for new targets, the private scratch
   * folder). Returns a note for the person naming each new entry the command left beside a file target (none otherwise).
   */
  release(): string[];
  /** The PID of the sandbox's watchdog (undefined without a sandbox). */
  watchdog?: number;
}

/**
 * The argv and environment that run `cmd` as `choice` says. In bubblewrap
 * the whole file system is read-only but for `writable` (the admitted
 * targets' real paths; a target not there yet gets a placeholder), the
 * runtime entries of the tool's state folder (the rest of it, and every new
 * name there, read-only: `tool-state.ts`), and a private TMPDIR
 * and XDG_CACHE_HOME. Codex is started with its own sandbox off
 * (`-c sandbox_mode="danger-full-access"`): its bubblewrap cannot nest in
 * this one (it writes /proc, read-only here), and this one confines what it
 * would have.
 */
export function confineCommand(
  choice: SandboxChoice,
  input: {
    cmd: readonly string[];
    env: NodeJS.ProcessEnv;
    cwd: string;
    writable: readonly string[];
    binder?: Binder;
    /** The session's MCP relay socket (outside), mounted at SANDBOX_MCP_SOCKET inside: `twinlock mcp` there talks through it. */
    mcpSocket?: string;
    /**
     * Where to record the sandbox's PID namespace for the hook, with the binding's secret digest and process
     * (`sandbox-record.ts`): written as soon as bwrap reports it, removed on release.
     */
    record?: { file: string; secret_sha256: string; process: BindingProcess };
  },
): ConfinedCommand {
  if (choice.kind === "none") return { cmd: [...input.cmd], env: input.env, notes: choice.notes, reap: () => undefined, release: () => [] };
  const binder = input.binder ?? "exec";
  // Claude Code's Write and Edit replace a file by a temporary one renamed over it: a file target mounted alone fails
  // that, so its folder is mounted writable, the other entries read-only (new names there are listed after). Codex
  // and Gemini write a file target in place: alone, and no new name beside it, which holds when their hook fails.
  const throughFolders = mountsThroughFolders(choice.tool);
  const scratch = mkdtempSync(path.join(os.tmpdir(), "twinlock-sandbox-"));
  // bwrap writes its child's PID and mount namespace here (outside every writable path; its descriptor is closed inside).
  const infoFile = path.join(scratch, "bwrap-info.json");
  let prepared: ReturnType<typeof prepareTargets> | undefined;
  let parents: ParentMount[] = [];
  const registries: StandInRegistry[] = [];
  // Outlives exec: when exec is killed (SIGKILL included), it kills what is left in the sandbox.
  let watchdog: ReturnType<typeof startWatchdog> | undefined;
  // Polls bwrap's information for the PID namespace until it is recorded (bwrap writes it before the command starts).
  let recorder: ReturnType<typeof setInterval> | undefined;
  const stopRecording = () => {
    if (recorder) clearInterval(recorder);
    recorder = undefined;
  };
  const reap = () => {
    stopRecording();
    const info = readSandboxInfo(infoFile);
    if (!info) return undefined;
    const killed = reapSandbox(info);
    return killed
      ? `twinlock: ${input.cmd[0]} ended and left ${killed} process${killed === 1 ? "" : "es"} in the sandbox: killed before the session was unbound`
      : undefined;
  };
  const release = (): string[] => {
    try {
      reap();
      // After the reap: nothing in the sandbox adds a name any more.
      const added = newEntries(parents);
      return added.length
        ? [
            `twinlock: ${input.cmd[0]} left ${added.length === 1 ? "a new entry" : `${added.length} new entries`} beside the file targets that ${added.length === 1 ? "is" : "are"} no target: ${added.join(", ")} (not a target: in the change close records, close --result verified refuses it as outside the plan)`,
          ]
        : [];
    } finally {
      stopRecording();
      if (input.record) removeSandboxRecord(input.record.file);
      watchdog?.dismiss();
      prepared?.undo();
      for (const r of registries) r.release();
      rmSync(scratch, { recursive: true, force: true });
    }
  };
  try {
    const tmp = path.join(scratch, "tmp");
    const cache = path.join(scratch, "cache");
    const runtime = path.join(scratch, "run");
    const copies = path.join(scratch, "copies");
    for (const d of [tmp, cache, runtime, copies]) mkdirSync(d, { mode: 0o700 });
    watchdog = startWatchdog(infoFile, scratch);
    const filter = path.join(scratch, "seccomp.bpf");
    // No confined process may signal exec or its watchdog (each a process and a group), exec's own process group (exec
    // is not its leader when npx, npm or a shell without job control started it), or every process at once.
    const seccomp = seccompFilter(process.arch, [process.pid, watchdog.pid, ...ownProcessGroup()]) ?? choice.seccomp;
    writeFileSync(filter, seccomp, { mode: 0o600 });
    try {
      prepared = prepareTargets(input.writable, { placeholders: !throughFolders });
    } catch (error) {
      throw new RefusalError(
        `the sandbox cannot mount a target writable (${(error as Error).message}); the session is ended: remove what is in the target's way and run exec again`,
        { attack: "target-moved-before-sandbox" },
        { cause: error },
      );
    }
    // Checked before the admission too (requireMountableTargets): again here, on the targets as they are now.
    const targets = targetMounts(prepared.paths, throughFolders);
    parents = targets.parents;
    const state = choice.tool ? [toolStateOf(choice.tool, input.env)] : [];
    const over: [string, string][] = [];
    const mounts = state.map((s) => {
      mkdirSync(s.dir, { recursive: true });
      checkStateFolder(choice.tool as AgentTool, s.dir, input.cwd, s.variable);
      // A private copy mounted over a file (not one in a private top level) needs a file there: a stand-in when none is.
      // Registered before any stand-in is made or found: another session ending meanwhile leaves them in place.
      const overFile = (file: string) => !(s.privateTop && path.dirname(file) === s.dir);
      const registry = s.privateCopies.some(overFile) ? new StandInRegistry(s.dir) : undefined;
      if (registry) registries.push(registry);
      const mount = runtimeMounts(s, input.cwd, path.join(scratch, "private"));
      s.privateCopies.forEach((file, i) => {
        // The copy starts as the file is (`{}` when there is none), and is thrown away with the scratch folder.
        const copy = path.join(copies, `${i}-${path.basename(file)}`);
        let content: string | undefined;
        try {
          content = readFileSync(file, "utf8");
        } catch {
          // not there (or not readable): starts as `{}`
        }
        const seeded = s.seedCopy ? s.seedCopy(file, content ?? "{}\n", input.cwd) : (content ?? "{}\n");
        // In a private top level, a plain file there (the tool may rename another over it); else mounted over the file.
        if (mount.top && !overFile(file)) writeFileSync(path.join(mount.top.folder, path.basename(file)), seeded, { mode: 0o600 });
        else {
          // bwrap mounts the copy over a file that is there: one not there yet gets an empty stand-in, removed after.
          if (content === undefined) registry?.make(file, "");
          writeFileSync(copy, seeded, { mode: 0o600 });
          over.push([copy, file]);
        }
      });
      return mount;
    });
    const at = choice.argsAt;
    const inner =
      choice.tool === "codex"
        ? [...input.cmd.slice(0, at), "-c", 'sandbox_mode="danger-full-access"', ...input.cmd.slice(at)]
        : [...input.cmd];
    // The caller's runtime folder (its sockets: D-Bus, a display's, an agent's) is hidden too, wherever it is.
    const runtimeDir = input.env.XDG_RUNTIME_DIR;
    const hidden = [...HIDDEN];
    if (runtimeDir && path.isAbsolute(runtimeDir) && !HIDDEN.some((h) => under(path.resolve(runtimeDir), h))) {
      try {
        const real = resolveRealPath(runtimeDir, "/");
        if (lstatSync(real).isDirectory() && !isWithin(resolveRealPath(input.cwd, "/"), real)) hidden.push(real);
      } catch {
        // not there: nothing to hide
      }
    }
    const readable = readableUnder(hidden, [
      input.cwd,
      input.env.HOME,
      input.env.TWINLOCK_HOME,
      // The state folders, read-only, wherever they are (their runtime entries are mounted writable after).
      ...state.map((s) => s.dir),
      input.env.TWINLOCK_HANDOFF,
      input.env.TWINLOCK_RUN ? path.dirname(input.env.TWINLOCK_RUN) : undefined,
      "/etc/resolv.conf",
      ...input.cmd,
      ...input.cmd.flatMap(packageFolders),
      // twinlock itself: the agent tool runs its hook (and `twinlock mcp`) inside, from wherever it is installed.
      PACKAGE_ROOT,
      ...(input.env.PATH ?? "").split(path.delimiter),
    ]);
    const copied = over.map(([, at]) => at);
    // Mounted with their state folder, before the writable entries in them (Gemini CLI's chats in its private tmp).
    const privateFolders = mounts.flatMap((m) => m.private);
    if (input.mcpSocket) over.push([input.mcpSocket, SANDBOX_MCP_SOCKET]);
    const argv = bubblewrapArgv({
      bwrap: choice.bwrap,
      cmd: inner,
      cwd: input.cwd,
      writable: [...targets.folders, tmp, cache, runtime],
      parents,
      state: mounts,
      hidden,
      readable,
      over,
      seccompFd: 3,
      infoFd: 4,
    });
    if (input.record) {
      const record = input.record;
      removeSandboxRecord(record.file);
      recorder = setInterval(() => {
        let info: ReturnType<typeof readSandboxInfo>;
        try {
          info = readSandboxInfo(infoFile);
        } catch {
          return; // being written
        }
        if (info?.pidNamespace === undefined) return;
        stopRecording();
        writeSandboxRecord(record.file, { secret_sha256: record.secret_sha256, process: record.process, pid_namespace: info.pidNamespace });
      }, 5);
      recorder.unref();
    }
    const where = prepared.paths.length ? prepared.paths.join(", ") : "none";
    const beside = parents.length
      ? `, new names beside the file targets in ${parents.map((p) => p.dir).join(", ")} (listed after; the other entries there read-only)`
      : "";
    const made = registries.flatMap((r) => r.made);
    return {
      // /bin/sh opens the filter as descriptor 3, the info file as 4, and becomes bwrap (the same process: signals reach it as they would).
      cmd: ["/bin/sh", "-c", 'f=$1; i=$2; shift 2; exec "$@" 3<"$f" 4>"$i"', "twinlock-sandbox", filter, infoFile, ...argv],
      // TWINLOCK_SANDBOX tells an in-process agent it is confined (the Claude Agent SDK's adapter refuses to start there).
      env: { ...input.env, TMPDIR: tmp, XDG_CACHE_HOME: cache, XDG_RUNTIME_DIR: runtime, [SANDBOX_ENV]: "bubblewrap" },
      notes: [
        ...prepared.notes,
        ...hiddenParentPackages(input.cwd, hidden, readable).map(
          (m) =>
            `twinlock: ${m} is not visible in the sandbox (${HIDDEN.join(", ")} are private to it), so a node script started in ${input.cwd} will not find the packages there (Node's "Cannot find package"): run it from ${path.dirname(m)}, or keep the project outside ${HIDDEN.join(", ")}`,
        ),
        ...(made.length
          ? [
              `twinlock: ${made.map((f) => f.path).join(", ")} ${made.length === 1 ? "is" : "are"} not there yet: an empty one is in place for the session, its private copy mounted over it (removed after, if left as it is)`,
            ]
          : []),
        `twinlock: ${input.cmd[0]} runs in a bubblewrap sandbox: it may write only ${WRITABLE_IN_WORDS[binder]} (${where})${beside}${mounts.length ? `, the runtime entries of its state folder ${mounts.map((m) => m.dir).join(", ")} (${mounts.map((m) => m.writable.map((w) => path.relative(m.dir, w)).join(", ")).join("; ")}${privateFolders.length ? `; private for the session: ${privateFolders.map(([, at]) => path.relative(mounts[0]?.dir ?? "/", at)).join(", ")}` : ""}; every other entry read-only${mounts.some((m) => m.top) ? ", a new one at its top level private to the session" : ", new ones too"})` : ""}${copied.length ? `, a private copy of ${copied.join(", ")} (thrown away after)` : ""} and a private TMPDIR; ${HIDDEN.join(", ")} and XDG_RUNTIME_DIR are private to it`,
      ],
      reap,
      release,
      watchdog: watchdog.pid,
    };
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * Where the sandbox lets a tool write in its state folder: each runtime entry
 * of `state` (made, when it is a folder not there yet), through a real path
 * with no link in it; a private one gets an empty folder of its own under
 * `privateRoot`, mounted over it (`private`: [its folder, the entry]), and a copied one a copy there (`private`: [the
 * copy, the entry]; bwrap reads the real file as it is when the session starts). An entry that is a link
 * or of another kind than expected is left out: read-only, as every other
 * entry of the folder.
 */
function runtimeMounts(
  state: ToolState,
  cwd: string,
  privateRoot: string,
): {
  dir: string;
  writable: string[];
  readOnly: string[];
  private: [string, string][];
  top?: { folder: string; mirror: string[]; sealed: [string, string][] };
} {
  const root = realpathSync(state.dir);
  const copies = new Set(state.privateCopies.map((f) => path.resolve(f)));
  const writable: string[] = [];
  const readOnly: string[] = [];
  const own: [string, string][] = [];
  state.runtime(readdirSync(root), path.resolve(cwd)).forEach((entry, i) => {
    const at = path.join(root, entry.path);
    if (!isWithin(at, root) || at === root) return;
    if (entry.how === "file") {
      if (entry.make) makeStandIn(at, "");
      if (lstatSync(at, { throwIfNoEntry: false })?.isFile()) writable.push(at);
      return;
    }
    if (entry.how === "copy") {
      if (!lstatSync(at, { throwIfNoEntry: false })?.isFile()) return;
      const copy = path.join(privateRoot, `copy-${i}`);
      mkdirSync(privateRoot, { recursive: true, mode: 0o700 });
      copyFileSync(at, copy);
      chmodSync(copy, 0o600);
      own.push([copy, at]);
      return;
    }
    if (!makeFolder(root, entry.path)) return;
    if (entry.how === "folder") writable.push(at);
    else if (entry.how === "read-only") readOnly.push(at);
    else {
      const folder = path.join(privateRoot, String(i));
      mkdirSync(folder, { recursive: true, mode: 0o700 });
      own.push([folder, at]);
    }
  });
  if (!state.privateTop) return { dir: root, writable, readOnly, private: own };
  // Every entry it has (runtime ones made above included), read-only in the private top level but for the copies there.
  const folder = path.join(privateRoot, "top");
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const names = readdirSync(root);
  const mirror = names.map((n) => path.join(root, n)).filter((p) => !copies.has(p) && !copies.has(path.join(state.dir, path.basename(p))));
  // A configuration name not there: an empty file of the session's own, read-only, so no new one can be made there.
  const sealed = state.sealed
    .filter((f) => !names.includes(f.name))
    .map((f): [string, string] => {
      const own = path.join(folder, f.name);
      writeFileSync(own, f.content, { mode: 0o444 });
      return [own, path.join(root, f.name)];
    });
  return { dir: root, writable, readOnly, private: own, top: { folder, mirror, sealed } };
}

/** Make each missing folder of `rel` under the real folder `root`; false when a part of it is a link or no folder. */
function makeFolder(root: string, rel: string): boolean {
  let at = root;
  for (const part of rel.split("/")) {
    at = path.join(at, part);
    try {
      mkdirSync(at, { mode: 0o700 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
    }
    if (!lstatSync(at).isDirectory()) return false;
  }
  return true;
}

/**
 * This process's group (field 5 of /proc/self/stat, after the command name
 * in parentheses, which may hold anything), or none when it cannot be read.
 */
export function ownProcessGroup(): number[] {
  try {
    const stat = readFileSync("/proc/self/stat", "utf8");
    const pgrp = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]);
    return Number.isSafeInteger(pgrp) && pgrp > 1 && pgrp !== process.pid ? [pgrp] : [];
  } catch {
    return [];
  }
}

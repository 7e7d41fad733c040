/** What the sandbox lets a command write, and how it is started: the input of `bubblewrapArgv`. */
export interface SandboxLayout {
  /** The bwrap program (absolute). */
  bwrap: string;
  /** The command, as it runs inside. */
  cmd: readonly string[];
  /** Its working folder. */
  cwd: string;
  /** Real folders it may write with everything in them: the folder targets and exec's private scratch folders. */
  writable: readonly string[];
  /**
   * The file targets' folders, ancestors first: each writable, with its other entries (existing paths) read-only
   * again, mounted before the state folders and `writable` (a folder target or state folder among them is writable again).
   */
  parents?: readonly { dir: string; readOnly: readonly string[] }[];
  /**
   * A tool's state folder, read-only as the rest, but for its runtime entries (`writable`, existing paths) and, inside
   * those, `readOnly` again (a private folder mounted over a runtime entry is one of `over`).
   */
  state: readonly {
    dir: string;
    writable: readonly string[];
    readOnly: readonly string[];
    /**
     * A private top level: this folder mounted over `dir`, `mirror` (the entries `dir` had) read-only in it again, and
     * `sealed` ([an empty file in `folder`, the name it stands for]) read-only over names the tool reads as configuration.
     */
    top?: { folder: string; mirror: readonly string[]; sealed?: readonly (readonly [string, string])[] };
    /** Private folders and copies, each [its own, the entry it is mounted over]: after `top`, before `writable`. */
    private?: readonly (readonly [string, string])[];
  }[];
  /** Folders hidden behind an empty private one (`/tmp`, `/var/tmp`, `/run`, the caller's XDG_RUNTIME_DIR). */
  hidden?: readonly string[];
  /** Existing paths under a hidden folder the command still reads (its working folder, HOME, the gate home): read-only again. */
  readable?: readonly string[];
  /** Files mounted writable over others: [the private copy, where it is mounted]. */
  over?: readonly (readonly [string, string])[];
  /** The file descriptor bwrap reads the seccomp filter from. */
  seccompFd: number;
  /** The file descriptor bwrap writes its child's PID and mount namespace to (`--info-fd`), closed in the sandbox. */
  infoFd: number;
}

/**
 * The bwrap argument list that runs `cmd` with the whole file system
 * read-only but for `writable`, the file targets' folders (`parents`, their
 * other entries read-only again) and the runtime entries of the tools' state
 * folders (the rest of each read-only, new names in it too). Mounts apply
 * in order, so a folder's read-only entries are mounted after it.
 * `/dev` is a new minimal one (no disks). `--unshare-pid` gives it a PID
 * namespace of its own and `/proc` is that namespace's: a confined process
 * sees and signals only the sandbox's processes (no other process of the
 * user, its environment, its memory or its `/proc/PID/root`); the hook,
 * whose walk up its parents then ends at the sandbox's first process, finds
 * the session through the PID namespace exec records beside the binding
 * (`sandbox-record.ts`). It always has a user namespace of its own with
 * every capability dropped (`--unshare-user --cap-drop ALL`), also when exec
 * runs as root: without one, root keeps its capabilities inside and reaches
 * the host's file system through `/proc/PID/root` of a process outside.
 * `--disable-userns` keeps it from making another user namespace (and with
 * it a mount namespace of its own), so every confined process stays in the
 * sandbox's mount namespace, which `--info-fd` reports and exec's reaper
 * (and its watchdog, when exec itself is killed) looks for. `--new-session`
 * stops a confined process from pushing keystrokes into the terminal
 * (TIOCSTI); `--die-with-parent` ends the sandbox's first process with exec
 * (what it started in a session of its own, exec's reaper kills).
 * `--unshare-ipc` and the private `hidden` folders keep it from System V
 * IPC and from the sockets other programs keep there (tmux, docker, D-Bus,
 * ssh-agent, PostgreSQL). The network is shared: the tool must reach its
 * model (and with it go abstract unix sockets: SECURITY.md).
 */
export function bubblewrapArgv(layout: SandboxLayout): string[] {
  const args = [
    layout.bwrap,
    "--unshare-user",
    "--disable-userns",
    "--unshare-ipc",
    "--unshare-pid",
    "--cap-drop",
    "ALL",
    "--die-with-parent",
    "--new-session",
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
  ];
  for (const d of layout.hidden ?? []) args.push("--tmpfs", d);
  for (const p of layout.readable ?? []) args.push("--ro-bind", p, p);
  for (const d of layout.parents ?? []) {
    args.push("--bind", d.dir, d.dir);
    for (const p of d.readOnly) args.push("--ro-bind", p, p);
  }
  for (const s of layout.state) {
    if (s.top) {
      args.push("--bind", s.top.folder, s.dir);
      for (const p of s.top.mirror) args.push("--ro-bind", p, p);
      for (const [own, at] of s.top.sealed ?? []) args.push("--ro-bind", own, at);
    }
    for (const [own, at] of s.private ?? []) args.push("--bind", own, at);
    for (const p of s.writable) args.push("--bind", p, p);
    for (const p of s.readOnly) args.push("--ro-bind", p, p);
  }
  for (const p of layout.writable) args.push("--bind", p, p);
  for (const [copy, at] of layout.over ?? []) args.push("--bind", copy, at);
  args.push("--seccomp", String(layout.seccompFd), "--info-fd", String(layout.infoFd), "--chdir", layout.cwd, "--", ...layout.cmd);
  return args;
}

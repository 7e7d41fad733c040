/** What the sandbox lets a command write, and how it is started: the input of `bubblewrapArgv`. */
export interface SandboxLayout {
  /** The bwrap program (absolute). */
  bwrap: string;
  /** The command, as it runs inside. */
  cmd: readonly string[];
  /** Its working folder. */
  cwd: string;
  /** Real paths it may write (existing files or folders): the admitted targets and exec's private scratch folder. */
  writable: readonly string[];
  /** A tool's state folder, writable, with the configuration entries in it (existing paths) read-only again. */
  state: readonly { dir: string; readOnly: readonly string[] }[];
  /** The file descriptor bwrap reads the seccomp filter from. */
  seccompFd: number;
}

/**
 * The bwrap argument list that runs `cmd` with the whole file system
 * read-only but for `writable` and the tools' state folders. Mounts apply in
 * order, so a state folder's configuration is mounted read-only after it.
 * `/dev` is a new minimal one (no disks); `/proc` stays the host's, read-only
 * (a write to another process's memory fails), so the hook still sees its
 * ancestry up to `exec`. `--new-session` stops a confined process from
 * pushing keystrokes into the terminal (TIOCSTI); `--die-with-parent` ends it
 * with exec. The network is shared: the tool must reach its model.
 */
export function bubblewrapArgv(layout: SandboxLayout): string[] {
  const args = [layout.bwrap, "--die-with-parent", "--new-session", "--ro-bind", "/", "/", "--dev", "/dev"];
  for (const s of layout.state) {
    args.push("--bind", s.dir, s.dir);
    for (const p of s.readOnly) args.push("--ro-bind", p, p);
  }
  for (const p of layout.writable) args.push("--bind", p, p);
  args.push("--seccomp", String(layout.seccompFd), "--chdir", layout.cwd, "--", ...layout.cmd);
  return args;
}

/** Types of server-process.mjs (plain JavaScript: the bench runs without a compiler). */
export interface ServerProcess {
  pid: number | undefined;
  url: string;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
  /** The code and signal once the process has exited, null while it runs. */
  exitStatus(): { code: number | null; signal: NodeJS.Signals | null } | null;
}
export function startServerProcess(args: string[], options?: { env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<ServerProcess>;
export function procMemory(pid: number | undefined): { rssKiB: number; hwmKiB: number };
export function watchChild(
  child: import("node:child_process").ChildProcess,
  tailBytes: number,
): { exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; stderr(): string };

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { makeSessionTempDir } from "./session-temp-folder.js";

/**
 * Where, inside exec's and plan's sandbox, the session's MCP relay socket
 * is mounted. `/run` is private there, so nothing else is at this path; a
 * `twinlock mcp` started inside (by the agent tool, from its MCP settings)
 * finds it and talks through it to the session's own server outside, which
 * can write the gate home and the run file that the sandbox keeps
 * read-only.
 */
export const SANDBOX_MCP_SOCKET = "/run/twinlock/mcp.sock";

/** At most this many relayed MCP sessions at once (each is one `twinlock mcp` process outside). */
const MAX_SESSIONS = 4;

/** The relay of one session: its socket (outside), and how to close it with every server it started. */
export interface McpRelay {
  socket: string;
  close(): Promise<void>;
}

/**
 * Listen on a new socket in a private folder (mode 0700: no other user can
 * connect) and, for each connection, start `cmd` (twinlock's stdio MCP
 * server for this session, with the arguments exec or plan chose: none of
 * the agent's) with `env`, its stdin and stdout joined to the connection.
 * The agent reaches through it what its own `twinlock mcp` would: the
 * agent's MCP tools, scoped as the server scopes them.
 */
export async function startMcpRelay(cmd: readonly string[], env: NodeJS.ProcessEnv): Promise<McpRelay> {
  const dir = makeSessionTempDir("mcp");
  const socket = path.join(dir, "mcp.sock");
  const children = new Set<ChildProcess>();
  const server = net.createServer((conn) => {
    if (children.size >= MAX_SESSIONS) {
      conn.destroy();
      return;
    }
    const child = spawn(cmd[0] as string, cmd.slice(1), { env, stdio: ["pipe", "pipe", "ignore"] });
    children.add(child);
    const end = () => {
      conn.destroy();
      child.kill("SIGTERM");
    };
    child.once("exit", () => {
      children.delete(child);
      conn.end();
    });
    child.once("error", end);
    conn.once("error", end);
    conn.once("close", () => child.stdin?.end());
    child.stdin?.on("error", () => {});
    conn.pipe(child.stdin as NodeJS.WritableStream);
    child.stdout?.pipe(conn);
  });
  const conns = new Set<net.Socket>();
  server.on("connection", (conn) => {
    conns.add(conn);
    conn.once("close", () => conns.delete(conn));
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socket, () => resolve());
    });
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    socket,
    close: async () => {
      for (const c of children) c.kill("SIGTERM");
      // The folder first, and every connection ended: a client that never hangs up holds neither the close nor the folder.
      rmSync(dir, { recursive: true, force: true });
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const conn of conns) conn.destroy();
      await closed;
    },
  };
}

/**
 * The session's MCP relay socket, when this process runs under exec or
 * plan: the one mounted in the sandbox, else the one TWINLOCK_MCP_SOCKET
 * names (exec and plan set it for an agent outside a sandbox). Undefined
 * when there is none: `twinlock mcp` then serves on its own.
 */
export function mcpRelayHere(env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (process.platform === "linux" && existsSync(SANDBOX_MCP_SOCKET)) return SANDBOX_MCP_SOCKET;
  return env.TWINLOCK_MCP_SOCKET || undefined;
}

/** Join stdin and stdout to the relay socket until either side ends (`twinlock mcp` inside the sandbox). */
export async function relayStdio(socket: string = SANDBOX_MCP_SOCKET): Promise<void> {
  const conn = net.connect(socket);
  await new Promise<void>((resolve, reject) => {
    conn.once("connect", () => resolve());
    conn.once("error", reject);
  });
  process.stdin.pipe(conn);
  conn.pipe(process.stdout);
  await new Promise<void>((resolve) => {
    conn.once("close", () => resolve());
    process.stdin.once("end", () => conn.end());
  });
}

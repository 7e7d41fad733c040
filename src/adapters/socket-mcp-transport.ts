import net from "node:net";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/**
 * An MCP client transport over a Unix socket, line-framed JSON-RPC as over
 * stdio: what `plan`'s and `exec`'s relay speaks (it joins each connection
 * to the stdin and stdout of the session's own `twinlock mcp` outside).
 */
export class SocketClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  private conn?: net.Socket;
  private readonly buffer = new ReadBuffer();
  /** Requests sent and not yet answered: only while there are any does the socket keep the process alive (an agent's script ends when its work does). */
  private readonly pending = new Set<string | number>();

  constructor(private readonly socket: string) {}

  async start(): Promise<void> {
    const conn = net.connect(this.socket);
    await new Promise<void>((resolve, reject) => {
      conn.once("connect", () => resolve());
      conn.once("error", reject);
    });
    this.conn = conn;
    conn.unref();
    conn.on("data", (chunk: Buffer) => {
      this.buffer.append(chunk);
      for (;;) {
        let message: JSONRPCMessage | null;
        try {
          message = this.buffer.readMessage();
        } catch (error) {
          this.onerror?.(error as Error);
          continue;
        }
        if (message === null) break;
        if ("id" in message && !("method" in message) && this.pending.delete(message.id as string | number) && this.pending.size === 0)
          conn.unref();
        this.onmessage?.(message);
      }
    });
    conn.on("error", (error) => this.onerror?.(error));
    conn.once("close", () => {
      this.buffer.clear();
      this.onclose?.();
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const conn = this.conn;
    if (!conn) throw new Error("the relay socket is not connected");
    if ("id" in message && "method" in message) {
      this.pending.add(message.id);
      conn.ref();
    }
    await new Promise<void>((resolve, reject) => conn.write(serializeMessage(message), (e) => (e ? reject(e) : resolve())));
  }

  async close(): Promise<void> {
    this.conn?.end();
    this.conn?.destroy();
  }
}

import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request an agent CLI made to the scripted model server, kept for asserts and for debugging a failed run. */
export interface RecordedRequest {
  method: string;
  url: string;
  /** The URL without its query. */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The body parsed as JSON, or the raw text when it is not JSON. */
  body: unknown;
}

/** What a protocol's responder is asked: the request, and every request before it. */
export interface ModelTurn {
  request: RecordedRequest;
  history: readonly RecordedRequest[];
}

/** Writes one answer in the wire protocol the CLI speaks. */
export type Responder = (turn: ModelTurn, res: ServerResponse) => void;

/** A scripted model server on 127.0.0.1: `url` to point the CLI at, `requests` it recorded, `close` to stop it. */
export interface ModelServer {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** The most body the server reads from one request: a CLI's whole conversation is far below it. */
const MAX_BODY = 32 * 1024 * 1024;

/**
 * Starts an HTTP server on 127.0.0.1 (an ephemeral port) that records every
 * request and answers each with `respond`. Nothing but loopback is ever
 * listened on or contacted.
 */
export async function startModelServer(respond: Responder): Promise<ModelServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req, res) => {
    readBody(req)
      .then((text) => {
        const url = req.url ?? "";
        const request: RecordedRequest = {
          method: req.method ?? "",
          url,
          path: url.split("?")[0] ?? url,
          headers: req.headers,
          body: parse(text),
        };
        requests.push(request);
        respond({ request, history: requests.slice(0, -1) }, res);
      })
      .catch((error: Error) => {
        res.writeHead(400, { "content-type": "text/plain" });
        res.end(`scripted model server: ${error.message}\n`);
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new Error(`request body over ${MAX_BODY} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function parse(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Writes `events` as one server-sent-event stream (`event:` lines only where a name is given) and ends the response. */
export function writeSse(res: ServerResponse, events: { event?: string; data: unknown }[]): void {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  for (const e of events) res.write(`${e.event ? `event: ${e.event}\n` : ""}data: ${JSON.stringify(e.data)}\n\n`);
  res.end();
}

/** Writes a JSON answer. */
export function writeJson(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

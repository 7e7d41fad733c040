import { readFileSync, realpathSync, statSync } from "node:fs";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";
import { UsageError } from "../errors/errors.js";
import { type NotifierOptions, startNotifier } from "../gate/deliver-notifications.js";
import { isWithin } from "../input/resolve-real-path.js";
import type { RunStore } from "../store/run-store.js";
import { parseTrustedProxy } from "./client-address.js";
import { type AccessLogEntry, createGateApp } from "./create-gate-app.js";

/** How `twinlock serve` was asked to listen. */
export interface ServeOptions {
  store: RunStore;
  /** `HOST:PORT` (default 127.0.0.1:7420); IPv6 as `[::1]:7420`; port 0 picks a free one. */
  listen?: string;
  tlsCert?: string;
  tlsKey?: string;
  /** Plain HTTP on a non-loopback address, knowingly. */
  insecureHttp?: boolean;
  /** The origin people open when it is not this address (behind a proxy): passkeys bind to its host name. */
  origin?: string;
  log?: (entry: AccessLogEntry) => void;
  /** For a team store: the folder agents' first freezes must be inside (`--handoff-root`). */
  handoffRoot?: string;
  /** IP addresses of reverse proxies whose `X-Forwarded-For` names the client (`--trusted-proxy`); nobody else's is read. */
  trustedProxies?: readonly string[];
  /** How the store's notification outbox is delivered (`false`: not by this server). */
  notify?: Omit<NotifierOptions, "store" | "origin" | "log"> | false;
}

/** A running gate server. */
export interface RunningGateServer {
  url: string;
  origin: string;
  port: number;
  /** Stop taking requests, let those in flight finish (their writes are atomic anyway), then close. */
  close(): Promise<void>;
}

/** Parse `HOST:PORT`, refusing what cannot be listened on. */
export function parseListen(text: string): { host: string; port: number } {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+)):(\d{1,5})$/.exec(text);
  const port = m ? Number(m[3]) : Number.NaN;
  if (!m || port > 65535) throw new UsageError(`--listen ${JSON.stringify(text)} is not HOST:PORT (e.g. 127.0.0.1:7420 or [::1]:7420)`);
  return { host: (m[1] ?? m[2]) as string, port };
}

/** `--handoff-root DIR` as a real folder path that neither is, nor holds, nor lies in the gate home. */
function requireHandoffRoot(dir: string, store: RunStore): string {
  let real: string;
  try {
    real = realpathSync(dir);
  } catch (error) {
    throw new UsageError(`--handoff-root ${dir} cannot be used (${(error as NodeJS.ErrnoException).code}); give an existing folder`);
  }
  if (!statSync(real).isDirectory()) throw new UsageError(`--handoff-root ${dir} is not a folder; give the folder agents' handoffs are in`);
  const home = realpathSync(store.home.shared?.homeDir ?? store.home.dir);
  if (isWithin(real, home) || isWithin(home, real))
    throw new UsageError(`--handoff-root ${dir} overlaps the gate home ${home}; give a folder apart from it`);
  return real;
}

/** Loopback: reachable only from this machine. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Start the gate server (SPEC §10). It binds loopback by default; any other
 * address needs TLS (`--tls-cert`/`--tls-key`) or an explicit
 * `--insecure-http`, which every page then shows. The host names it answers
 * to are fixed once the port is known.
 */
export async function startGateServer(options: ServeOptions): Promise<RunningGateServer> {
  const { host, port } = parseListen(options.listen ?? "127.0.0.1:7420");
  const tls = options.tlsCert !== undefined || options.tlsKey !== undefined;
  if (tls && (options.tlsCert === undefined || options.tlsKey === undefined))
    throw new UsageError("--tls-cert and --tls-key go together; give both files");
  const loopback = isLoopback(host);
  if (!loopback && !tls && !options.insecureHttp)
    throw new UsageError(
      `--listen ${host}:${port} is reachable from other machines; serve it over TLS (--tls-cert FILE --tls-key FILE), or pass --insecure-http to accept plain HTTP knowingly`,
    );
  const handoffRoot = options.handoffRoot === undefined ? undefined : requireHandoffRoot(options.handoffRoot, options.store);
  const trustedProxies = (options.trustedProxies ?? []).map((text) => {
    const address = parseTrustedProxy(text);
    if (address === undefined)
      throw new UsageError(
        `--trusted-proxy ${JSON.stringify(text)} is not an IP address; give the proxy's own address, as 127.0.0.1 or ::1`,
      );
    return address;
  });
  if (options.origin !== undefined && !/^https?:\/\/[^/]+$/.test(options.origin))
    throw new UsageError(`--origin ${JSON.stringify(options.origin)} is not an origin like https://gate.example.com`);
  const serverOptions = tls
    ? { key: readPem(options.tlsKey as string, "--tls-key"), cert: readPem(options.tlsCert as string, "--tls-cert") }
    : undefined;
  let fetcher: ((request: Request, env: unknown) => Response | Promise<Response>) | undefined;
  const { server, address } = await new Promise<{ server: ReturnType<typeof serve>; address: AddressInfo }>((resolve, reject) => {
    const s = serve(
      {
        fetch: (request, env) => (fetcher ? fetcher(request, env) : new Response("starting", { status: 503 })),
        hostname: host,
        port,
        ...(tls ? { createServer: createHttpsServer, serverOptions } : {}),
      },
      (info) => resolve({ server: s, address: info }),
    );
    s.once("error", (error: NodeJS.ErrnoException) =>
      reject(
        new UsageError(
          error.code === "EADDRINUSE"
            ? `${host}:${port} is already in use; stop the other server or choose another --listen`
            : `cannot listen on ${host}:${port} (${error.code ?? error.message})`,
        ),
      ),
    );
  });
  const actualPort = address.port;
  const scheme = tls ? "https" : "http";
  const hostPart = host.includes(":") ? `[${host}]` : host;
  const defaultOrigin = loopback ? `${scheme}://localhost:${actualPort}` : `${scheme}://${hostPart}:${actualPort}`;
  const origin = options.origin ?? defaultOrigin;
  const allowedHosts = new Set([`${hostPart}:${actualPort}`, new URL(origin).host]);
  if (loopback) for (const h of ["localhost", "127.0.0.1", "[::1]"]) allowedHosts.add(`${h}:${actualPort}`);
  const { app, inFlight } = createGateApp({
    store: options.store,
    origin,
    allowedHosts: [...allowedHosts],
    tls,
    insecureHttp: !loopback && !tls,
    log: options.log,
    handoffRoot,
    trustedProxies,
  });
  fetcher = app.fetch;
  // The outbox is delivered beside the requests, never in their way (src/notify).
  const notifier =
    options.notify === false
      ? undefined
      : startNotifier({
          ...options.notify,
          store: options.store,
          origin,
          log: options.log ? (e) => options.log?.({ at: new Date().toISOString(), ...e } as never) : undefined,
        });
  return {
    url: `${scheme}://${hostPart}:${actualPort}`,
    origin,
    port: actualPort,
    close: () =>
      new Promise<void>((resolve) => {
        const closed = notifier?.close() ?? Promise.resolve();
        server.close(() => void closed.then(() => resolve()));
        // Idle keep-alive connections would hold close() open; busy ones finish their request first.
        (server as { closeIdleConnections?: () => void }).closeIdleConnections?.();
        const wait = setInterval(() => {
          if (inFlight() === 0) (server as { closeIdleConnections?: () => void }).closeIdleConnections?.();
        }, 50);
        server.once("close", () => clearInterval(wait));
      }),
  };
}

function readPem(file: string, option: string): Buffer {
  try {
    return readFileSync(file);
  } catch (error) {
    throw new UsageError(`${option} ${file} cannot be read (${(error as NodeJS.ErrnoException).code}); give the PEM file`);
  }
}

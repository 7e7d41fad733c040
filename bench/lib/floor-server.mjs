/**
 * The server section's floors: `node floor-server.mjs http` is a bare
 * `node:http` server, `node floor-server.mjs hono` a Hono app with one route
 * on `@hono/node-server` (what twinlock serve is built on). Both listen on
 * 127.0.0.1 on a free port, print `listening on URL` as `twinlock serve`
 * does, answer every request with the same small fixed JSON body, and stop
 * on SIGTERM or SIGINT.
 */
import http from "node:http";

const BODY = JSON.stringify({ ok: true, status: { planner: "MD-01", state: "dry_run_ready", next: "admit" } });
const kind = process.argv[2];

let server;
if (kind === "http") {
  server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(BODY) });
      res.end(BODY);
    });
  });
  server.listen(0, "127.0.0.1", () => announce(server.address().port));
} else if (kind === "hono") {
  const { Hono } = await import("hono");
  const { serve } = await import("@hono/node-server");
  const app = new Hono();
  app.all("*", (c) => c.body(BODY, 200, { "content-type": "application/json" }));
  server = serve({ fetch: app.fetch, hostname: "127.0.0.1", port: 0 }, (info) => announce(info.port));
} else {
  process.stderr.write("usage: floor-server.mjs http|hono\n");
  process.exit(2);
}

function announce(port) {
  process.stdout.write(`floor ${kind}: listening on http://127.0.0.1:${port}\n`);
}

for (const signal of ["SIGTERM", "SIGINT"])
  process.once(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections?.();
  });

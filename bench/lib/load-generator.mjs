/**
 * A bounded HTTP load generator for the server section of the benchmark (no
 * dependency): `concurrency` clients on one keep-alive agent with that many
 * sockets, each sending its next request as soon as the last one's body has
 * been read, until `requests` have been sent or `maxSeconds` have passed,
 * whichever comes first. Every request's latency (first byte written to last
 * byte read) is recorded. Only loopback URLs are accepted: the bench never
 * sends traffic anywhere else.
 */
import http from "node:http";

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * Run one bounded load. `request(i)` gives the i-th request: `{ method, path,
 * headers, body }` (body a string; a JSON body gets its content type and
 * length here). A response whose status is not `expectStatus` counts as an
 * error; the first one's status and body are kept for the report. `warmup`
 * requests (bounded by `warmupSeconds`, default `maxSeconds`) are sent first
 * and not recorded.
 *
 * Returns `{ count, errors, firstError, seconds, rps, p50, p90, p99, max,
 * concurrency }`, times in ms.
 */
export async function runLoad({
  url,
  request,
  concurrency = 1,
  requests = 1000,
  maxSeconds = 5,
  warmup = 0,
  warmupSeconds = maxSeconds,
  expectStatus = 200,
}) {
  const base = new URL(url);
  if (base.protocol !== "http:" || !LOOPBACK.has(base.hostname))
    throw new Error(`the load generator only targets plain HTTP on loopback, not ${url}`);
  if (!(Number.isInteger(concurrency) && concurrency >= 1 && concurrency <= 256))
    throw new Error(`concurrency ${concurrency} out of range`);
  if (!(Number.isInteger(requests) && requests >= 1)) throw new Error(`requests ${requests} must be a positive whole number`);
  if (!(maxSeconds > 0 && maxSeconds <= 600)) throw new Error(`maxSeconds ${maxSeconds} must be in (0, 600]`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency, maxFreeSockets: concurrency });
  try {
    if (warmup > 0)
      await drive({ base, agent, request, concurrency, requests: warmup, maxSeconds: Math.min(maxSeconds, warmupSeconds), expectStatus });
    return await drive({ base, agent, request, concurrency, requests, maxSeconds, expectStatus });
  } finally {
    agent.destroy();
  }
}

async function drive({ base, agent, request, concurrency, requests, maxSeconds, expectStatus }) {
  const latencies = new Float64Array(requests);
  let sent = 0;
  let done = 0;
  let errors = 0;
  let firstError;
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(maxSeconds * 1e9));
  const client = async () => {
    while (sent < requests && process.hrtime.bigint() < deadline) {
      const i = sent++;
      const t0 = process.hrtime.bigint();
      let res;
      try {
        res = await send(base, agent, request(i));
      } catch (error) {
        res = { status: 0, body: String(error?.message ?? error) };
      }
      latencies[done++] = Number(process.hrtime.bigint() - t0) / 1e6;
      if (res.status !== expectStatus) {
        errors++;
        firstError ??= `HTTP ${res.status}: ${res.body.slice(0, 300)}`;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, client));
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const sorted = latencies.subarray(0, done).sort();
  const pct = (p) => (done === 0 ? Number.NaN : sorted[Math.min(done - 1, Math.ceil((p / 100) * done) - 1)]);
  return {
    concurrency,
    count: done,
    errors,
    firstError,
    seconds,
    rps: done / seconds,
    p50: pct(50),
    p90: pct(90),
    p99: pct(99),
    max: done === 0 ? Number.NaN : sorted[done - 1],
  };
}

/** One request on the keep-alive agent; resolves with the status and the whole body as text. */
function send(base, agent, { method = "GET", path, headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const h = { ...headers };
    if (body !== undefined) {
      h["content-type"] ??= "application/json";
      h["content-length"] = Buffer.byteLength(body);
    }
    const req = http.request({ agent, host: base.hostname.replace(/^\[|\]$/g, ""), port: base.port, method, path, headers: h }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
      res.on("error", reject);
    });
    req.setTimeout(30_000, () => req.destroy(new Error("no answer in 30 s")));
    req.on("error", reject);
    req.end(body);
  });
}

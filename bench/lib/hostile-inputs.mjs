/**
 * The hostile inputs of the bench's "hostile inputs" section
 * (bench/lib/hostile-bench.mjs): each writes, in place of an agent's own
 * files, what an agent that wants the gate down can write there. Shapes, as
 * test/bench/hostile-inputs-shape.test.ts holds them:
 *
 *   - a text file of random lines (117 KiB, 16-byte lines by default), two
 *     different ones frozen as two revisions make the plan's line diff do
 *     its worst (every line deleted, every line inserted);
 *   - a validly chained run file of about 50 MB: the run's own events, then
 *     stop events with 16 KiB notes, each `prev` the hash of the one before,
 *     `head` the last one's (verifyChain accepts it); the first added stop
 *     names a pair the run does not have, so replaying the events refuses
 *     at the first added one and all the cost is in reading, parsing,
 *     schema-checking and hashing the chain;
 *   - a run file of N empty events (`{}`), the run's own other fields kept:
 *     3,000,000 of them is 9 MB, 40,000 is 120 KB;
 *   - an `action_plan.json` of N empty actions (`{}` a line; 50,000 is 200 KB);
 *   - a handoff of N small files (20,000 of 16 bytes) beside its records;
 *   - a flood of anonymous sign-in starts from many loopback addresses
 *     (127.0.0.2, .3, …: the client socket bound to each), all answered
 *     before it returns.
 *
 * Nothing here talks to anything but 127.0.0.1.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";

/** 117 KiB: the size of the random-lines file the attack used. */
export const RANDOM_LINES_BYTES = 117 * 1024;

/**
 * Write `bytes` bytes of random lines to `file`: each line `lineBytes − 1`
 * random lowercase hex digits and a newline (the last line too). `bytes`
 * must be a multiple of `lineBytes`. Returns the bytes and lines written.
 */
export function writeRandomLinesFile(file, { bytes = RANDOM_LINES_BYTES, lineBytes = 16 } = {}) {
  if (!(Number.isInteger(lineBytes) && lineBytes >= 2)) throw new Error(`lineBytes ${lineBytes} must be a whole number ≥ 2`);
  if (bytes % lineBytes !== 0) throw new Error(`${bytes} bytes is not a whole number of ${lineBytes}-byte lines`);
  const lines = bytes / lineBytes;
  const hex = randomBytes(Math.ceil((lines * (lineBytes - 1)) / 2)).toString("hex");
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  let from = 0;
  for (let i = 0; i < lines; i++) {
    out.write(hex.slice(from, from + lineBytes - 1), at, "latin1");
    from += lineBytes - 1;
    at += lineBytes - 1;
    out[at++] = 0x0a;
  }
  writeFileSync(file, out);
  return { bytes, lines };
}

/** 50 MB: the validly chained run file of the attack. */
export const CHAINED_RUN_BYTES = 50 * 1000 * 1000;
/** The note of each added stop (the run schema allows 64 KiB). */
const NOTE_BYTES = 16 * 1024;

/**
 * Grow the run file `runFile` to at least `bytes` bytes with chained stop
 * events (see above), written as the gate writes run files (`JSON.stringify`
 * with one space of indent). `hashEvent` is the library's
 * (dist/run/event-chain.js). Returns the bytes written and the events.
 */
export function writeChainedRunFile(runFile, { hashEvent, bytes = CHAINED_RUN_BYTES }) {
  const run = JSON.parse(readFileSync(runFile, "utf8"));
  const events = [...run.events];
  let prev = run.head;
  const at = new Date().toISOString();
  let size = Buffer.byteLength(JSON.stringify(run, null, 1));
  for (let k = 0; size < bytes; k++) {
    const note = randomBytes(NOTE_BYTES / 2).toString("hex");
    // A pair no run has: replay refuses the first added event, after the chain check has hashed every one.
    const event = {
      seq: events.length + 1,
      at,
      actor: "agent",
      type: "stop_raised",
      data: { reason: `flood-${k}`, workflow: "ZZ-999", note },
      prev,
    };
    events.push(event);
    prev = hashEvent(event);
    size += Buffer.byteLength(JSON.stringify(event, null, 1)) + 4;
  }
  const grown = { ...run, revision: events.length, head: prev, events };
  const text = `${JSON.stringify(grown, null, 1)}\n`;
  writeFileSync(runFile, text);
  return { bytes: Buffer.byteLength(text), events: events.length, added: events.length - run.events.length };
}

/**
 * Replace the events of the run file `runFile` with `count` empty events
 * (`{}`), every other field of the run kept. Returns the bytes written.
 */
export function writeEmptyEventsRunFile(runFile, count) {
  const run = JSON.parse(readFileSync(runFile, "utf8"));
  const { events: _events, ...rest } = run;
  const head = JSON.stringify(rest).slice(0, -1);
  const text = `${head},"events":[${count > 0 ? `{}${",{}".repeat(count - 1)}` : ""}]}\n`;
  writeFileSync(runFile, text);
  return { bytes: Buffer.byteLength(text), events: count };
}

/**
 * Replace the handoff's `action_plan.json` with `count` empty actions, one
 * `{}` a line, and no stops. Returns the file and its bytes.
 */
export function writeEmptyActionsPlan(handoffDir, count) {
  const file = join(handoffDir, "action_plan.json");
  const text = `{"actions":[\n${Array.from({ length: count }, () => "{}").join(",\n")}\n],"stops":[]}\n`;
  writeFileSync(file, text);
  return { file, bytes: statSync(file).size, actions: count };
}

/**
 * Add `count` files of `bytes` bytes each to the handoff, under
 * `files/` in folders of 1,000. Returns the folder and the count.
 */
export function writeManySmallFiles(handoffDir, count, bytes = 16) {
  const dir = join(handoffDir, "files");
  for (let i = 0; i < count; i++) {
    const sub = join(dir, `d${String(Math.floor(i / 1000)).padStart(3, "0")}`);
    if (i % 1000 === 0) mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `f${String(i).padStart(6, "0")}.txt`), `${String(i).padStart(bytes - 1, "0")}\n`);
  }
  return { dir, files: count };
}

/** The loopback source addresses of a flood: 127.0.0.2 … (127.0.0.1 is the reviewer's). */
export function loopbackAddresses(count) {
  if (!(Number.isInteger(count) && count >= 1 && count <= 250)) throw new Error(`${count} addresses: give 1 to 250`);
  return Array.from({ length: count }, (_, i) => `127.0.0.${i + 2}`);
}

/**
 * Send `requests` anonymous `POST /signin/options` to the server at `url`
 * (loopback only), taking the `addresses` source addresses in turn,
 * `concurrency` at a time, each request bounded by `timeoutMs`, and stop
 * early once `deadline` (a `performance.now()` time) has passed. Returns
 * how many were answered, by status, and the source addresses used.
 */
export async function signinFlood({
  url,
  requests = 1200,
  addresses = loopbackAddresses(40),
  concurrency = 8,
  timeoutMs = 30_000,
  deadline,
}) {
  const base = new URL(url);
  if (base.protocol !== "http:" || base.hostname !== "127.0.0.1")
    throw new Error(`the sign-in flood only targets http://127.0.0.1, not ${url}`);
  const statuses = {};
  const used = new Set();
  let next = 0;
  const one = (localAddress) =>
    new Promise((resolve) => {
      const req = http.request(
        { host: "127.0.0.1", port: base.port, method: "POST", path: "/signin/options", localAddress, agent: false },
        (res) => {
          res.resume();
          res.on("end", () => resolve(String(res.statusCode)));
          res.on("error", () => resolve("error"));
        },
      );
      req.setTimeout(timeoutMs, () => req.destroy(new Error("timeout")));
      req.on("error", (e) => resolve(e.message === "timeout" ? "timeout" : "error"));
      req.end();
    });
  const worker = async () => {
    while (next < requests && (deadline === undefined || performance.now() < deadline)) {
      const localAddress = addresses[next++ % addresses.length];
      used.add(localAddress);
      const s = await one(localAddress);
      statuses[s] = (statuses[s] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { sent: Object.values(statuses).reduce((a, b) => a + b, 0), statuses, addresses: [...used] };
}

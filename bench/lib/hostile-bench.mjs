/**
 * The benchmark's "hostile inputs" section: what an agent that wants the
 * gate down costs everyone else. A `twinlock serve` process (its own gate
 * home, the realistic 257-prompt suite, signed receipts) is probed, open
 * loop, by two probes that never wait for each other or for the server:
 *
 *   - `GET /healthz` every PROBE.healthzMs;
 *   - a signed-in reviewer's revision page of another run (the reviewer
 *     enrolled a software passkey through the server and signed in with it,
 *     as the browser does) every PROBE.pageMs;
 *
 * each latency counted from the moment the probe was due (not sent), so a
 * server that stops answering is charged for every probe that queued behind
 * it. First on an idle server (the floor), then while each availability
 * attack runs against it, one at a time, each on a fresh server process:
 *
 *   1. the plan of a pair whose last two revisions are two different 117 KiB
 *      files of random lines (`GET …/plan` with the agent's token: a line diff);
 *   2. a validly chained 50 MB run file: status GETs with its agent's token
 *      and anonymous admission checks (no token), side by side;
 *   3. a run file of 3,000,000 empty events (9 MB), status GETs;
 *   4. a run file of 40,000 empty events (120 KB), status GETs;
 *   5. an `action_plan.json` of 50,000 empty actions: MCP readiness with a
 *      token that has only the status scope;
 *   6. a handoff of 20,000 small files: MCP readiness, status scope only;
 *   7. 1,200 anonymous sign-in starts from 40 loopback addresses (127.0.0.2–41),
 *      with a reviewer's own sign-in started before it and finished after it.
 *
 * The hostile files are written by bench/lib/hostile-inputs.mjs. Each attack
 * sends its requests one after another (two streams for the 50 MB run file,
 * eight for the flood), for the phase's time or its request cap, each request
 * bounded by a timeout; then the phase waits for every request still out
 * (each bounded too) and the server is stopped. A server that died during the
 * phase is recorded as "server died" (with the last line it wrote) and the
 * next row starts a fresh one. Everything is on 127.0.0.1.
 */
import { createPrivateKey } from "node:crypto";
import { readFileSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { loadGateLibrary, prepareGateRuns, statusRequest } from "./gate-runs.mjs";
import {
  CHAINED_RUN_BYTES,
  loopbackAddresses,
  signinFlood,
  writeChainedRunFile,
  writeEmptyActionsPlan,
  writeEmptyEventsRunFile,
  writeManySmallFiles,
  writeRandomLinesFile,
} from "./hostile-inputs.mjs";
import { fmtMs, printTable } from "./print-table.mjs";
import { startServerProcess } from "./server-process.mjs";
import { makeSignedSuite } from "./signed-suite.mjs";

/**
 * The origin every fresh server is told it is served at, so the passkey enrolled through the first signs in on each;
 * every request carries its host, as a browser's would (the port is not listened on).
 */
const ORIGIN = "http://localhost:7420";
const ORIGIN_HOST = new URL(ORIGIN).host;
/** The targets: a gate under attack still answers its health check and still shows a reviewer the plan. */
export const HOSTILE_TARGETS = { healthzP99Ms: 50, pageP50Ms: 500 };
/**
 * How often each probe is due: light enough that the probes alone keep an idle server far from busy (a page costs the
 * server far more than /healthz), often enough for a p99 over a phase (BENCH_QUICK: 60 /healthz samples, 12 pages).
 */
const PROBE = { healthzMs: 100, pageMs: 500 };
/** A flood's probes stop once it has sent everything, or after this long. */
const FLOOD_MAX_SECONDS = 120;

/**
 * Run the section in `workDir` on a signed copy of `suiteDir`; print its
 * table; return the rows for the Targets table. `only`: run the idle row and
 * only the attacks whose name contains this text.
 */
export async function benchHostileInputs({ root, cli, suiteDir, workDir, quick, only }) {
  const phase = { seconds: quick ? 6 : 15, timeoutMs: quick ? 20_000 : 30_000 };
  const lib = await loadGateLibrary(root);
  const { SoftwareAuthenticator } = await import(join(root, "dist", "passkey", "software-authenticator.js"));
  const { createInvitation } = await import(join(root, "dist", "passkey", "passkey-enrolment.js"));
  const { hashEvent } = await import(join(root, "dist", "run", "event-chain.js"));
  const signed = await makeSignedSuite(root, suiteDir, join(workDir, "signed"), cli);
  const home = lib.openGateHome(signed.home);
  const store = lib.folderRunStore(home);
  const freezeKey = createPrivateKey(readFileSync(signed.freezeKey));
  const runs = await prepareGateRuns({ lib, signed, dir: join(workDir, "runs"), from: 0, to: 7, concurrency: 4 });
  const [victim, diffRun, chainRun, millionsRun, thousandsRun, actionsRun, filesRun] = runs;
  const handoffOf = (run) => join(run.runFile, "..", "handoff");
  const statusOnly = async (run) =>
    (await lib.createAgentToken(home, { agent: `hostile-${run.index}`, runId: run.runId, planner: run.planner, scopes: ["status"] })).token;
  const env = { ...process.env, TWINLOCK_HOME: signed.home };
  const serve = () => startServerProcess([cli, "serve", "--listen", "127.0.0.1:0", "--origin", ORIGIN, "--quiet"], { env });
  const authenticator = new SoftwareAuthenticator();
  let enrolled = false;

  /** On a fresh server: enrol the reviewer once (in the home), sign in, and check the page the probe opens. */
  const signInOn = async (server) => {
    if (!enrolled) {
      const { token } = await createInvitation(home, "bench-reviewer-passkey", ["review", "consent", "apply", "stop"]);
      const started = expectJson(await post(server, `/enrol/${token}/options`));
      await post(server, `/enrol/${token}`, { response: authenticator.register(started.options, ORIGIN) });
      enrolled = true;
    }
    const started = await startSignIn(server);
    const cookie = await finishSignIn(server, started, authenticator);
    const page = pagePaths(victim);
    const { text } = await call(server, { path: page, headers: { cookie, accept: "text/html" } });
    if (!text.includes(victim.planner))
      throw new Error(`the reviewer's revision page ${page} does not show ${victim.planner}: ${text.slice(0, 300)}`);
    return { cookie };
  };

  const attacks = [
    {
      name: "plan diff: two revisions of a 117 KiB file of random lines",
      prepare: async () => {
        // Revisions 2 and 3 of the pair: each freeze a new file of random lines beside the records.
        const file = join(handoffOf(diffRun), "lines.txt");
        for (let i = 0; i < 2; i++) {
          writeRandomLinesFile(file);
          await lib.freezePairHandoff({
            store,
            run: diffRun.runFile,
            planner: diffRun.planner,
            handoffDir: handoffOf(diffRun),
            key: freezeKey,
          });
        }
        return { streams: [() => ({ method: "GET", path: `${statusRequest(diffRun).path}/plan`, headers: auth(diffRun.token) })] };
      },
      what: "agent GET …/plan (line diff of revision 3 against 2)",
    },
    {
      name: `validly chained ${(CHAINED_RUN_BYTES / 1e6).toFixed(0)} MB run file`,
      prepare: async () => {
        const shape = writeChainedRunFile(chainRun.runFile, { hashEvent });
        return {
          streams: [() => statusRequest(chainRun), () => admissionCheckAnonymous(chainRun)],
          detail: `${shape.events.toLocaleString("en-US")} events, ${(shape.bytes / 1e6).toFixed(1)} MB`,
        };
      },
      what: "agent status GETs + anonymous admission checks",
    },
    {
      name: "run file of 3,000,000 empty events",
      prepare: async () => {
        const shape = writeEmptyEventsRunFile(millionsRun.runFile, 3_000_000);
        return { streams: [() => statusRequest(millionsRun)], detail: `${(shape.bytes / 1e6).toFixed(1)} MB` };
      },
      what: "agent status GETs",
    },
    {
      name: "run file of 40,000 empty events",
      prepare: async () => {
        const shape = writeEmptyEventsRunFile(thousandsRun.runFile, 40_000);
        return { streams: [() => statusRequest(thousandsRun)], detail: `${(shape.bytes / 1e3).toFixed(0)} KB` };
      },
      what: "agent status GETs",
    },
    {
      name: "action_plan.json of 50,000 empty actions",
      prepare: async () => {
        const shape = writeEmptyActionsPlan(handoffOf(actionsRun), 50_000);
        const token = await statusOnly(actionsRun);
        return { streams: [() => mcpReadiness(actionsRun, token)], detail: `${(shape.bytes / 1e3).toFixed(0)} KB` };
      },
      what: "MCP readiness, status-scope token",
    },
    {
      name: "handoff of 20,000 small files",
      prepare: async () => {
        writeManySmallFiles(handoffOf(filesRun), 20_000);
        const token = await statusOnly(filesRun);
        return { streams: [() => mcpReadiness(filesRun, token)] };
      },
      what: "MCP readiness, status-scope token",
    },
    {
      name: "1,200 anonymous sign-in starts from 40 loopback addresses",
      prepare: async () => ({ flood: { requests: 1200, addresses: loopbackAddresses(40) } }),
      what: "POST /signin/options, 8 at a time",
    },
  ];

  const rows = [];
  rows.push(await measurePhase({ name: "idle server (floor)", what: "none" }));
  // `only` (BENCH_HOSTILE): the attacks whose name contains it, for a quicker look at one.
  for (const attack of attacks.filter((a) => !only || a.name.includes(only))) rows.push(await measurePhase(attack));

  /** One row: a fresh server, the probes for the phase's time, the attack (if any) beside them. */
  async function measurePhase(attack) {
    const prepared = attack.prepare ? await attack.prepare() : { streams: [] };
    const server = await serve();
    try {
      const reviewer = await signInOn(server);
      // The reviewer's own sign-in, started before a flood and finished after it (the flood could push it out).
      const pendingSignIn = prepared.flood ? await startSignIn(server) : undefined;
      const started = performance.now();
      // The probes run for the phase's time, and on until a flood has sent all its requests (at most FLOOD_MAX_SECONDS).
      let attackDone = !prepared.flood;
      const phaseEnd = started + phase.seconds * 1000;
      const hardEnd = started + FLOOD_MAX_SECONDS * 1000;
      const until = () => performance.now() >= phaseEnd && (attackDone || performance.now() >= hardEnd);
      const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
      const probes = Promise.all([
        openLoop(server, agent, { method: "GET", path: "/healthz" }, PROBE.healthzMs, until, phase.timeoutMs),
        openLoop(
          server,
          agent,
          { method: "GET", path: pagePaths(victim), headers: { cookie: reviewer.cookie, accept: "text/html" } },
          PROBE.pageMs,
          until,
          phase.timeoutMs,
        ),
      ]);
      const attackAnswers = {};
      const count = (status) => {
        attackAnswers[status] = (attackAnswers[status] ?? 0) + 1;
      };
      const attackAgent = new http.Agent({ keepAlive: true, maxSockets: 8 });
      const streams = (prepared.streams ?? []).map(async (request) => {
        for (let i = 0; i < 1000 && performance.now() < phaseEnd; i++)
          count((await send(server, attackAgent, request(), phase.timeoutMs)).status);
      });
      const flood = prepared.flood
        ? signinFlood({ url: server.url, ...prepared.flood, timeoutMs: phase.timeoutMs, deadline: hardEnd }).then((f) => {
            attackDone = true;
            for (const [status, n] of Object.entries(f.statuses)) attackAnswers[status] = (attackAnswers[status] ?? 0) + n;
            return f;
          })
        : undefined;
      const [[healthz, page]] = await Promise.all([probes, Promise.all(streams), flood]);
      agent.destroy();
      attackAgent.destroy();
      const died = server.exitStatus();
      // Still answering once everything is in? A server still busy with the attack's work is "not answering".
      const after = died ? undefined : await send(server, undefined, { method: "GET", path: "/healthz" }, 2000);
      const state = died ? "died" : after?.status === 200 ? "alive" : server.exitStatus() ? "died" : "not answering";
      let signIn;
      if (pendingSignIn && !died) {
        try {
          await finishSignIn(server, pendingSignIn, authenticator);
          signIn = "the reviewer's sign-in started before it completed after it";
        } catch (error) {
          signIn = `the reviewer's sign-in started before it FAILED after it (${String(error.message).slice(0, 80)})`;
        }
      }
      return {
        name: attack.name,
        what: attack.what,
        detail: prepared.detail,
        seconds: (performance.now() - started) / 1000,
        healthz,
        page,
        answers: attackAnswers,
        state,
        died: server.exitStatus() ? describeExit(server.exitStatus(), server.stderr()) : undefined,
        signIn,
      };
    } finally {
      await server.stop();
    }
  }

  printTable(
    `Hostile inputs: /healthz and a reviewer's revision page while an agent attacks the server (\`twinlock serve\`, targets: /healthz p99 ≤ ${HOSTILE_TARGETS.healthzP99Ms} ms, page p50 ≤ ${HOSTILE_TARGETS.pageP50Ms} ms)`,
    ["attack", "attack requests", "/healthz p50", "/healthz p99", "page p50", "page p99", "probes failed", "attack answers", "server"],
    rows.map((r) => [
      r.detail ? `${r.name} (${r.detail})` : r.name,
      r.what,
      r.died ? "server died" : fmtAt(r.healthz.p50At),
      r.died ? "server died" : fmtAt(r.healthz.p99At),
      r.died ? "server died" : fmtAt(r.page.p50At),
      r.died ? "server died" : fmtAt(r.page.p99At),
      `${r.healthz.failed + r.page.failed} of ${r.healthz.count + r.page.count}`,
      Object.entries(r.answers)
        .map(([s, n]) => `${s}×${n}`)
        .join(" ") || "–",
      r.died ? `died (${r.died})` : r.state === "alive" ? "alive" : "alive, not answering /healthz within 2 s",
    ]),
    [
      `each row: a fresh server; probes open loop for ${phase.seconds} s (GET /healthz every ${PROBE.healthzMs} ms, the reviewer's revision page of another run every ${PROBE.pageMs} ms),`,
      `latency from when each probe was due to the last byte of its answer; every request bounded by ${phase.timeoutMs / 1000} s (a timed-out probe counts that long and as failed; "≥" marks a percentile that fell on one).`,
      "the attack's requests run one after another per stream until the probes' time is up (the flood: until it has sent all its requests), then everything still out is waited for.",
      ...rows.filter((r) => r.signIn).map((r) => `${r.name}: ${r.signIn}.`),
    ],
  );
  return rows;
}

/** The Targets table's rows: each attack's /healthz p99 and page p50, with the idle floor beside it. */
export function hostileTargets(rows) {
  if (!rows) return [];
  const [idle, ...attacks] = rows;
  const out = [];
  for (const r of [idle, ...attacks]) {
    const label = r === idle ? "idle server" : r.name;
    const value = (stat, floor) => (r.died ? "server died" : r === idle ? fmtAt(stat) : `${fmtAt(stat)} (idle ${fmtAt(floor)})`);
    out.push([
      `hostile: /healthz p99, ${label}`,
      value(r.healthz.p99At, idle.healthz.p99At),
      `≤ ${HOSTILE_TARGETS.healthzP99Ms} ms`,
      !r.died && r.healthz.failed === 0 && r.healthz.p99 <= HOSTILE_TARGETS.healthzP99Ms,
    ]);
    out.push([
      `hostile: reviewer page p50, ${label}`,
      value(r.page.p50At, idle.page.p50At),
      `≤ ${HOSTILE_TARGETS.pageP50Ms} ms`,
      !r.died && r.page.p50 <= HOSTILE_TARGETS.pageP50Ms,
    ]);
  }
  return out;
}

/**
 * Send `request` every `everyMs` until `until()` says to stop,
 * never waiting for an answer before the next is due; resolve once every
 * answer is in with the latencies' p50/p99/max, counted from when each was due.
 */
async function openLoop(server, agent, request, everyMs, until, timeoutMs) {
  const samples = [];
  let failed = 0;
  const out = [];
  const start = performance.now();
  for (let k = 0; ; k++) {
    const due = start + k * everyMs;
    if (until()) break;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    out.push(
      send(server, agent, request, timeoutMs).then((r) => {
        samples.push({ ms: performance.now() - due, timedOut: r.status === "timeout" });
        if (r.status !== 200) failed++;
      }),
    );
  }
  await Promise.all(out);
  samples.sort((a, b) => a.ms - b.ms);
  const pct = (p) => samples[Math.min(samples.length - 1, Math.ceil((p / 100) * samples.length) - 1)];
  // A percentile that fell on a probe that timed out is only a lower bound: the server had not answered by then.
  const at = (p) => ({ ms: pct(p).ms, atLeast: pct(p).timedOut });
  return { count: samples.length, failed, p50: pct(50).ms, p99: pct(99).ms, p50At: at(50), p99At: at(99) };
}

/** One request to the server; resolves (never rejects) with its status: a number, "timeout" or "error". */
function send(server, agent, { method = "GET", path, headers = {}, body }, timeoutMs) {
  const base = new URL(server.url);
  return new Promise((resolve) => {
    const h = { host: ORIGIN_HOST, ...headers };
    if (body !== undefined) {
      h["content-type"] ??= "application/json";
      h["content-length"] = Buffer.byteLength(body);
    }
    let settled = false;
    const done = (status) => {
      if (!settled) {
        settled = true;
        resolve({ status });
      }
    };
    const req = http.request({ agent: agent ?? false, host: "127.0.0.1", port: base.port, method, path, headers: h }, (res) => {
      res.resume();
      res.on("end", () => done(res.statusCode ?? 0));
      res.on("error", () => done("error"));
    });
    // A deadline from when the request was made, queued for a socket or not (a socket timeout would start only once it has one).
    const timer = setTimeout(() => {
      done("timeout");
      req.destroy();
    }, timeoutMs);
    req.on("close", () => clearTimeout(timer));
    req.on("error", () => done("error"));
    req.end(body);
  });
}

const auth = (token) => ({ authorization: `Bearer ${token}` });

function pagePaths(run) {
  return `/runs/${run.runId}/pairs/${encodeURIComponent(run.planner)}/revisions/1`;
}

function admissionCheckAnonymous(run) {
  return { method: "POST", path: `/api/runs/${run.runId}/executors/${encodeURIComponent(run.executor)}/admission-check`, body: "{}" };
}

/** A JSON-RPC `tools/call` of twinlock_readiness on the server's MCP endpoint (stateless: no session needed). */
function mcpReadiness(run, token) {
  return {
    method: "POST",
    path: "/mcp",
    headers: { ...auth(token), accept: "application/json, text/event-stream" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "twinlock_readiness", arguments: { planner: run.planner } },
    }),
  };
}

/**
 * One request as a browser at the servers' origin sends it (its `Host`), on its own connection; resolves with the
 * status, the Set-Cookie lines and the body, or rejects on a status other than 200.
 */
function call(server, { method = "GET", path, headers = {}, json }) {
  const body = json === undefined ? undefined : JSON.stringify(json);
  const h = { host: ORIGIN_HOST, ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) };
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port: new URL(server.url).port, method, path, headers: h, agent: false }, (res) => {
      const chunks = [];
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        if (res.statusCode !== 200) reject(new Error(`${method} ${path}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`));
        else resolve({ status: res.statusCode, setCookie: res.headers["set-cookie"] ?? [], text });
      });
      res.on("error", reject);
    });
    req.setTimeout(60_000, () => req.destroy(new Error(`${method} ${path}: no answer in 60 s`)));
    req.on("error", reject);
    req.end(body);
  });
}

const post = (server, path, json) => call(server, { method: "POST", path, json });

function expectJson(res) {
  return JSON.parse(res.text);
}

/** The first half of a sign-in, from 127.0.0.1: the pending cookie and the challenge. */
async function startSignIn(server) {
  const res = await post(server, "/signin/options");
  const body = expectJson(res);
  const pending = /twinlock_signin=([^;]*)/.exec(res.setCookie.join("\n"))?.[1];
  if (!pending) throw new Error("POST /signin/options set no twinlock_signin cookie");
  return { cookie: `twinlock_signin=${pending}`, challenge: body.options.challenge };
}

/** The second half: the passkey's assertion over the challenge; the session cookie. */
async function finishSignIn(server, started, authenticator) {
  const response = authenticator.assert(started.challenge, { rpId: new URL(ORIGIN).hostname, origin: ORIGIN });
  const res = await call(server, { method: "POST", path: "/signin", headers: { cookie: started.cookie }, json: { response } });
  const session = /twinlock_session=([^;]*)/.exec(res.setCookie.join("\n"))?.[1];
  if (!session) throw new Error("POST /signin set no session cookie");
  return `twinlock_session=${session}`;
}

function describeExit(status, stderr) {
  return `${status.signal ?? `exit ${status.code}`}: ${lastLine(stderr)}`;
}

function lastLine(text) {
  const lines = text
    .trim()
    .split("\n")
    .filter((l) => l.trim() !== "");
  const oom = lines.find((l) => /out of memory|heap limit/i.test(l));
  return (oom ?? lines[lines.length - 1] ?? "no output").trim().slice(0, 120);
}

/** A percentile, with "≥" when it fell on a probe that timed out. */
function fmtAt({ ms, atLeast }) {
  return `${atLeast ? "≥ " : ""}${fmtLatency(ms)}`;
}

function fmtLatency(ms) {
  if (ms === undefined || Number.isNaN(ms)) return "n/a";
  return ms < 1 ? `${ms.toFixed(3)} ms` : fmtMs(ms);
}

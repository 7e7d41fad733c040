/*
 * The agent can make every file it writes and every request it sends as
 * large, wide and deep as it likes. Each entry point that reads one (the
 * CLI commands that read a run, a handoff or twinlock.yaml, the hook's
 * stdin, the API routes an agent token or an anonymous caller reaches, and
 * the MCP tools) refuses it cleanly: the CLI with exit 1, 2 or 3 and one
 * line, no stack trace; the API with a 4xx problem; MCP with an error
 * result; the hook with its agent tool's deny. Never a crash, an internal
 * error, a 5xx or a hang.
 *
 * Each property runs 3 times by default, 12 under TWINLOCK_SOAK=1 (.ci/run);
 * ENTRY_FUZZ_RUNS=200 runs the long form.
 */
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AGENTS, type Agent } from "../../src/hook/agent-contracts.js";
import { createTwinlockMcpServer } from "../../src/mcp/create-twinlock-mcp-server.js";
import { createAgentToken, TOKEN_SCOPES } from "../../src/server/agent-tokens.js";
import { apiOf, call, removeServerWorlds, type ServerWorld, serverWorld, TEST_HOST } from "../../src/test-support/gate-server-fixture.js";
import {
  type HostileJson,
  hostileBody,
  hostileHookInput,
  hostileRecord,
  hostileRunFile,
  hostileSuiteConfig,
} from "../../src/test-support/hostile-inputs.js";
import { type CliRun, runCli, STACK_FRAME } from "../../src/test-support/run-cli.js";
import {
  EXECUTOR,
  type GateRun,
  makeGateRun,
  makeRunTempDir,
  PLANNER,
  removeGateRuns,
  startRun,
  storeOf,
  TEST_PINNER,
} from "../../src/test-support/run-fixture.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";
import { soakCount } from "../support/soak.js";

/** Runs of each property: ENTRY_FUZZ_RUNS when set (200 for a long soak), else 3, or 12 under TWINLOCK_SOAK=1. */
const RUNS = soakCount("ENTRY_FUZZ_RUNS", 3, 12);
/** The gate server's request body limit (create-gate-app.ts MAX_BODY_BYTES). */
const MAX_BODY_BYTES = 256 * 1024;

afterAll(() => {
  removeGateRuns();
  removeServerWorlds();
});

/** What was fed where, for the message of a failed expectation. */
function fed(where: string, h: { anomaly: string; at?: string }): string {
  return `${where} fed a run of ${h.anomaly}${h.at ? ` at ${h.at}` : ""}`;
}

/** A clean refusal of the CLI: exit 1, 2 or 3, one line on stderr, no stack trace, no internal error. */
function expectCliRefusal(r: CliRun, what: string): void {
  expect([1, 2, 3], `${what}: exit ${r.code}\n${r.output.slice(0, 2000)}`).toContain(r.code);
  expect(r.output, what).not.toMatch(STACK_FRAME);
  expect(r.output, what).not.toMatch(/internal error|RangeError|Maximum call stack|heap out of memory/i);
  const lines = r.stderr.trim().split("\n");
  expect(lines.length, `${what}: ${r.stderr.slice(0, 2000)}`).toBe(1);
  expect(lines[0]?.length ?? 0, what).toBeGreaterThan(0);
  // One line a person can read: never the input echoed back whole.
  expect(lines[0]?.length ?? 0, what).toBeLessThan(2000);
}

describe("the CLI commands that read a run refuse a hostile run file cleanly", () => {
  let g: GateRun;
  beforeAll(async () => {
    g = makeGateRun();
    await startRun(g);
  });
  const commands = (run: string, home: string): Array<[string, string[]]> => [
    ["pair-status", ["pair-status", run, "--home", home, PLANNER]],
    ["present", ["present", run, "--home", home, PLANNER]],
    ["freeze-pair-handoff", ["freeze-pair-handoff", run, "--home", home, PLANNER]],
    ["review-pair-plan", ["review-pair-plan", run, "--home", home, PLANNER, "--decision", "approved"]],
    ["admit", ["admit", run, "--home", home, EXECUTOR]],
    ["log", ["log", run, "--home", home]],
    ["verify-log", ["verify-log", run, "--home", home]],
  ];

  it("refuses a run file too large, too wide, too deep, with one long string or many empty events, with exit 1, 2 or 3 and one line", async () => {
    await fc.assert(
      fc.asyncProperty(hostileRunFile(), fc.nat({ max: 6 }), fc.boolean(), async (h, which, json) => {
        writeFileSync(g.runFile, h.text);
        const [name, argv] = commands(g.runFile, g.home)[which] as [string, string[]];
        const r = await runCli(json ? [...argv, "--json"] : argv);
        if (json) {
          // --json keeps its one document on stdout even for a refusal, or says it on stderr.
          expect([1, 2, 3]).toContain(r.code);
          expect(r.output).not.toMatch(STACK_FRAME);
          expect(r.output).not.toMatch(/internal error/i);
        } else expectCliRefusal(r, fed(name, h));
      }),
      { numRuns: RUNS * 3 },
    );
  }, 120_000);
});

describe("the CLI commands that read a handoff refuse a hostile record cleanly", () => {
  let g: GateRun;
  let pristine: Buffer;
  beforeAll(async () => {
    g = makeGateRun();
    await startRun(g);
    pristine = readFileSync(g.runFile);
  });

  it("readiness and freeze-pair-handoff refuse an action plan or evidence index too large, wide or deep with one line", async () => {
    await fc.assert(
      fc.asyncProperty(
        hostileRecord(),
        fc.constantFrom("action_plan.json", "evidence_index.json", "finding_register.json"),
        fc.constantFrom("readiness", "freeze-pair-handoff"),
        async (h, file, command) => {
          const handoff = path.join(makeRunTempDir("twinlock-hostile-handoff-"), "handoff");
          cpSync(g.handoff, handoff, { recursive: true });
          writeFileSync(path.join(handoff, file), h.text);
          writeFileSync(g.runFile, pristine);
          const argv =
            command === "readiness"
              ? ["readiness", handoff]
              : ["freeze-pair-handoff", g.runFile, "--home", g.home, PLANNER, "--handoff", handoff];
          const r = await runCli(argv);
          const what = `${command} fed ${file} with ${h.anomaly} at ${h.at}`;
          if (command === "readiness") {
            // readiness reports, on stdout: "not ready", with the one problem of that file naming the limit it broke.
            expect(r.code, `${what}: ${r.output.slice(0, 2000)}`).toBe(1);
            expect(r.output, what).not.toMatch(STACK_FRAME);
            expect(r.stdout, what).toMatch(/^not ready: /m);
            const about = r.stdout.split("\n").filter((l) => l.startsWith(`${file}: `));
            if (h.anomaly === "long-string" || h.anomaly === "empty-elements") {
              // Within the budget, so read and refused by shape: its first few issues, not one per element.
              expect(about.length, what).toBeGreaterThanOrEqual(1);
              expect(about.length, what).toBeLessThanOrEqual(20);
            } else {
              expect(about, what).toHaveLength(1);
              expect(about[0], what).toMatch(/over the .*limit for a handoff record/);
            }
            expect(r.output.length, what).toBeLessThan(10_000);
          } else expectCliRefusal(r, what);
          // A refused freeze changes nothing.
          expect(readFileSync(g.runFile).equals(pristine)).toBe(true);
        },
      ),
      { numRuns: RUNS * 2 },
    );
  }, 120_000);
});

describe("validate and trust pin refuse a hostile twinlock.yaml cleanly", () => {
  it("refuses a twinlock.yaml too large, too long a list or too deep, with exit 1 or 2 and one line", async () => {
    const g = makeGateRun({ copySuite: true });
    const keyFile = path.join(g.dir, "pinner.pem");
    writeFileSync(keyFile, TEST_PINNER.export({ type: "pkcs8", format: "pem" }) as string, { mode: 0o600 });
    await fc.assert(
      fc.asyncProperty(hostileSuiteConfig(), fc.constantFrom("validate", "trust pin"), async (h, command) => {
        writeFileSync(path.join(g.suite, "twinlock.yaml"), h.text);
        const argv =
          command === "validate"
            ? ["validate", "--suite", g.suite]
            : ["trust", "pin", "--suite", g.suite, "--allow-unsigned", "--key", keyFile, "--home", g.home];
        const r = await runCli(argv);
        expect([1, 2], `${command} fed ${h.anomaly}: ${r.output.slice(0, 2000)}`).toContain(r.code);
        expect(r.output).not.toMatch(STACK_FRAME);
        expect(r.output).toMatch(/over the .*limit/);
      }),
      { numRuns: RUNS * 2 },
    );
  }, 120_000);
});

/** The reason in an agent tool's deny, or undefined when the answer is no deny. */
function denyReason(agent: Agent, stdout: string): string | undefined {
  const out = JSON.parse(stdout);
  if (agent === "claude" || agent === "codex")
    return out.hookSpecificOutput?.permissionDecision === "deny" ? out.hookSpecificOutput.permissionDecisionReason : undefined;
  if (agent === "gemini") return out.decision === "deny" ? out.reason : undefined;
  return out.permission === "deny" ? out.user_message : undefined;
}

describe("twinlock hook denies hostile stdin in each agent tool's own form", () => {
  beforeAll(ensureBuilt, 180_000);

  it("denies stdin too large, too wide, too deep, or with a huge tool input, for claude, codex, gemini and cursor", () => {
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    fc.assert(
      fc.property(hostileHookInput(), fc.constantFrom(...AGENTS), (h, agent) => {
        const r = spawnSync(process.execPath, [DIST_BIN, "hook", agent], {
          input: h.text,
          env,
          encoding: "utf8",
          timeout: 30_000,
          maxBuffer: 64 * 1024 * 1024,
        });
        const what = `hook ${agent} fed ${h.anomaly} at ${h.at}: status ${r.status} signal ${r.signal} ${r.stderr.slice(0, 500)}`;
        expect(r.signal, what).toBeNull();
        expect(r.status, what).toBe(0);
        expect(r.stderr, what).not.toMatch(STACK_FRAME);
        const reason = denyReason(agent, r.stdout);
        expect(reason, what).toBeDefined();
        expect(reason, what).not.toMatch(/did not decide within|the hook failed/);
        expect(r.stdout.length, what).toBeLessThan(4000);
      }),
      { numRuns: RUNS },
    );
  }, 180_000);
});

describe("the API routes an agent token or an anonymous caller reaches refuse hostile bodies with a 4xx problem", () => {
  let w: ServerWorld;
  let token: string;
  beforeAll(async () => {
    w = await serverWorld();
    ({ token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId }));
  });

  const routes = (): Array<[string, string, Record<string, unknown>]> => {
    const a = apiOf(w);
    return [
      ["freeze", a.freeze, { handoff_dir: "handoff" }],
      ["result", a.result, { result: "verified", residual: "none" }],
      ["admission-check", a.admission, { planner: PLANNER, mode: "APPLY_SAFE", environment: "staging", actions: "all" }],
      ["review", a.review, { handoff_hash: `sha256:${"0".repeat(64)}`, decision: "approved" }],
      ["consent", a.consent, { handoff_hash: `sha256:${"0".repeat(64)}`, approve: true }],
      ["apply-approval", a.apply, { handoff_hash: `sha256:${"0".repeat(64)}` }],
      ["stops", a.stops, { reason: "x" }],
      ["lift", a.lift, { reason: "x", note: "y" }],
      ["runs", "/api/runs", { suite: "x" }],
      ["mcp", "/mcp", { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "twinlock_status", arguments: {} } }],
    ];
  };

  it("answers every hostile body, with or without the agent's token, with a 4xx problem naming its code, never a 5xx", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.nat({ max: 9 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.constantFrom("application/json", "application/x-www-form-urlencoded", "text/plain"),
        async (which, withToken, seed, type) => {
          const [name, url, fields] = routes()[which] as [string, string, Record<string, unknown>];
          // JSON-RPC echoes a request's id and may ignore a member it does not know: the anomaly goes where the server must read it.
          const bodies =
            name === "mcp"
              ? hostileBody(MAX_BODY_BYTES, fields, false, ["params", "method", "jsonrpc"])
              : hostileBody(MAX_BODY_BYTES, fields);
          const [h] = fc.sample(bodies, { seed, numRuns: 1 }) as [HostileJson];
          const headers: Record<string, string> = { host: TEST_HOST, "content-type": type };
          if (withToken) headers.authorization = `Bearer ${token}`;
          if (name === "mcp") headers.accept = "application/json, text/event-stream";
          const r = await call(w, url, { body: h.text, headers, method: "POST" });
          const text = await r.text();
          const what = `POST ${name} (${withToken ? "agent" : "anonymous"}, ${type}) fed ${h.anomaly} at ${h.at}: ${r.status} ${text.slice(0, 500)}`;
          expect(r.status, what).toBeLessThan(500);
          if (name === "mcp" && r.status === 200) {
            // Streamable HTTP answers a JSON-RPC error in a 200: an error, never a result.
            expect(text, what).toMatch(/"error"|"isError":true/);
            expect(text, what).not.toMatch(/-32603|internal error/i);
            return;
          }
          expect(r.status, what).toBeGreaterThanOrEqual(400);
          const body = JSON.parse(text) as { code?: unknown; message?: unknown; error?: { code?: unknown } };
          if (name === "mcp" && body.error !== undefined) {
            // The MCP endpoint refuses in JSON-RPC's own form: a parse or invalid-request error, never an internal one.
            expect(body.error.code, what).not.toBe(-32603);
            return;
          }
          expect(typeof body.code, what).toBe("string");
          expect(body.code, what).not.toMatch(/INTERNAL/);
        },
      ),
      { numRuns: RUNS * 4 },
    );
  }, 120_000);
});

describe("the MCP tools answer hostile arguments with an error result", () => {
  let g: GateRun;
  let client: Client;
  beforeAll(async () => {
    g = makeGateRun();
    const started = await startRun(g);
    const server = createTwinlockMcpServer({
      store: storeOf(g),
      ref: g.runFile,
      runId: started.state.run_id,
      planner: null,
      scopes: TOKEN_SCOPES,
      actor: "agent:planner-agent",
      reviewUrl: () => null,
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    client = new Client({ name: "twinlock-hostile", version: "1" });
    await Promise.all([server.connect(a), client.connect(b)]);
  });
  afterAll(async () => {
    await client?.close();
  });

  const tools: Array<[string, Record<string, unknown>]> = [
    ["twinlock_status", { planner: PLANNER }],
    ["twinlock_readiness", { planner: PLANNER, handoff_dir: "handoff" }],
    ["twinlock_submit_handoff", { planner: PLANNER, handoff_dir: "handoff" }],
    ["twinlock_request_review", { planner: PLANNER }],
    ["twinlock_check_admission", { executor: EXECUTOR, planner: PLANNER, mode: "APPLY_SAFE", environment: "staging", actions: "all" }],
    ["twinlock_report_result", { planner: PLANNER, result: "verified", residual: "none" }],
  ];

  it("answers arguments too large, too wide, too deep or with one long string, in any argument of any tool, with isError or a protocol error, never an internal error", async () => {
    await fc.assert(
      fc.asyncProperty(fc.nat({ max: tools.length - 1 }), fc.integer({ min: 0, max: 1_000_000 }), async (which, seed) => {
        const [name, args] = tools[which] as [string, Record<string, unknown>];
        const [h] = fc.sample(hostileBody(16 * 1024 * 1024, args, false), { seed, numRuns: 1 }) as [HostileJson];
        const what = `${name} fed ${h.anomaly} at ${h.at}`;
        let answer: { isError?: unknown; content?: unknown } | undefined;
        let thrown: unknown;
        try {
          answer = (await client.callTool({ name, arguments: JSON.parse(h.text) })) as typeof answer;
        } catch (e) {
          thrown = e;
        }
        if (thrown !== undefined) {
          // A protocol error for arguments the tool's schema refuses: invalid params, never internal.
          expect(String(thrown), what).toMatch(/-32602|Invalid/);
          expect(String(thrown), what).not.toMatch(/-32603/);
          return;
        }
        expect(answer?.isError, `${what}: ${JSON.stringify(answer).slice(0, 500)}`).toBe(true);
        expect(JSON.stringify(answer?.content).length, what).toBeLessThan(10_000);
        expect(JSON.stringify(answer?.content), what).not.toMatch(/internal error| {4}at /i);
      }),
      { numRuns: RUNS * 2 },
    );
  }, 120_000);
});

describe("twinlock mcp over stdio answers hostile arguments with an error result and keeps serving", () => {
  let g: GateRun;
  let client: Client;
  beforeAll(async () => {
    await ensureBuilt();
    g = makeGateRun();
    await startRun(g);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [DIST_BIN, "mcp", "--run", g.runFile],
      env: { ...process.env, TWINLOCK_HOME: g.home, NODE_OPTIONS: "" } as Record<string, string>,
      stderr: "pipe",
    });
    client = new Client({ name: "twinlock-hostile-stdio", version: "1" });
    await client.connect(transport);
  }, 180_000);
  afterAll(async () => {
    await client?.close();
  });

  it("refuses arguments too large, too wide, too deep or with one long string, then still answers a plain status call", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<[string, Record<string, unknown>]>(
          ["twinlock_status", { planner: PLANNER }],
          ["twinlock_readiness", { planner: PLANNER, handoff_dir: "handoff" }],
          ["twinlock_submit_handoff", { planner: PLANNER, handoff_dir: "handoff" }],
          ["twinlock_report_result", { planner: PLANNER, result: "verified", residual: "none" }],
        ),
        fc.integer({ min: 0, max: 1_000_000 }),
        async ([name, args], seed) => {
          // Within the SDK's 10 MiB stdio message buffer (a larger line ends the session: the test below).
          const stdioBodies = hostileBody(8 * 1024 * 1024, args, false).filter((x) => x.anomaly !== "bytes");
          const [h] = fc.sample(stdioBodies, { seed, numRuns: 1 }) as [HostileJson];
          const what = `stdio ${name} fed ${h.anomaly} at ${h.at}`;
          let answer: { isError?: unknown } | undefined;
          let thrown: unknown;
          try {
            answer = (await client.callTool({ name, arguments: JSON.parse(h.text) }, undefined, { timeout: 60_000 })) as typeof answer;
          } catch (e) {
            thrown = e;
          }
          if (thrown !== undefined) {
            expect(String(thrown), what).toMatch(/-32602|Invalid/);
            expect(String(thrown), what).not.toMatch(/-32603|-32001|timed out|closed/i);
          } else expect(answer?.isError, what).toBe(true);
          const status = await client.callTool({ name: "twinlock_status", arguments: { planner: PLANNER } });
          expect(status.isError, `${what}, then status`).toBeFalsy();
        },
      ),
      { numRuns: RUNS },
    );
  }, 180_000);
  it("ends the session with exit 2 and one line naming the limit when a message is over the stdio transport's 10 MiB buffer", () => {
    const request = {
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: { name: "twinlock_status", arguments: { planner: "x".repeat(11 * 1024 * 1024) } },
    };
    const r = spawnSync(process.execPath, [DIST_BIN, "mcp", "--run", g.runFile], {
      input: `${JSON.stringify(request)}\n`,
      env: { ...process.env, TWINLOCK_HOME: g.home, NODE_OPTIONS: "" },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.signal, r.stderr).toBeNull();
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr.trim().split("\n"), r.stderr).toHaveLength(1);
    expect(r.stderr).toContain("over the 10,485,760-byte limit for one MCP message over stdio");
    expect(r.stderr).not.toMatch(STACK_FRAME);
  }, 120_000);
});

import { read } from "node:fs";
import { parentPort, Worker, workerData } from "node:worker_threads";
import { BUDGETS, BudgetError, requireJsonWithin } from "../input/budgets.js";
import { findDuplicateJsonKey } from "../input/duplicate-json-key.js";
import { writeOutput } from "../write-output.js";
import { AGENT_CONTRACTS, AGENTS, type Agent, type AgentContract, agentNamed, type HookAnswer, readHookInput } from "./agent-contracts.js";
import { decideToolCall } from "./decide-tool-call.js";
import { judgeToolCall } from "./judge-tool-call.js";
import type { ToolCall } from "./tool-call.js";
import { NO_SESSION, namesSession } from "./verify-binding.js";

/** The most stdin the hook reads (a Write of a large file carries its content); more is denied (the hook input budget). */
export const MAX_HOOK_INPUT = BUDGETS.hookInput.bytes;
/** The hook's own deadline: below every agent tool's hook timeout, so a stalled hook denies rather than times out. */
export const HOOK_DEADLINE_MS = 5000;

/** What the main thread hands the worker that judges the call. */
interface WorkerJob {
  agent: Agent;
  text: string;
  home: string | undefined;
}

/**
 * `twinlock hook claude|codex|gemini|cursor [--home DIR]`: answer one
 * pre-tool-use call in the agent tool's own contract, and exit. Fails
 * closed: bad or oversized input, a crash, a missing home or binding, or
 * its own deadline all end in that tool's deny. Started before commander
 * and the rest of the CLI (see bin.ts): it loads only its own few modules.
 *
 * With `workerFile` (the hook bundle, as installed) the call is judged in a
 * worker thread running that file, and this thread only reads stdin and
 * keeps the deadline: however long the judging runs synchronously (a huge
 * input, a blocking read of a FIFO the agent named), the deadline's timer
 * fires here, answers the tool's deny and exits, which ends the worker.
 * Without it (run from source), the call is judged on this thread.
 */
export function runHook(argv: string[], workerFile?: string): void {
  const agent = agentNamed(argv[0]);
  if (!agent) {
    writeOutput(2, `twinlock: hook needs the agent tool: one of ${AGENTS.join(", ")} (e.g. \`twinlock hook claude\`)\n`);
    process.exit(2);
  }
  const contract = AGENT_CONTRACTS[agent];
  let done = false;
  const finish = (answer: HookAnswer) => {
    if (done) return;
    done = true;
    if (answer.stdout) writeOutput(1, answer.stdout);
    if (answer.stderr) writeOutput(2, answer.stderr);
    process.exit(answer.exitCode);
  };
  const deny = (reason: string) => finish(contract.deny(reason));
  process.on("uncaughtException", (error) => deny(`twinlock: the hook failed (${error?.message ?? error}); denied`));
  const asked = Number(process.env.TWINLOCK_HOOK_TIMEOUT_MS);
  const deadline = Number.isFinite(asked) && asked > 0 ? Math.min(asked, HOOK_DEADLINE_MS) : HOOK_DEADLINE_MS;
  setTimeout(() => deny(`twinlock: the hook did not decide within ${deadline} ms; denied`), deadline);
  const args = argv.slice(1);
  const homeAt = args.indexOf("--home");
  if ((homeAt >= 0 && args[homeAt + 1] === undefined) || args.some((a, i) => a !== "--home" && i !== homeAt + 1)) {
    deny(`twinlock: hook takes only --home DIR after the agent tool, got ${JSON.stringify(args.join(" "))}; denied`);
    return;
  }
  const home = homeAt >= 0 ? args[homeAt + 1] : undefined;
  readStdin((error, text) => {
    try {
      if (error) return deny(`twinlock: ${error}; denied`);
      // A test's way to make the hook stall: the judging blocks its thread, which only the deadline's deny ends.
      const stall = process.env.TWINLOCK_HOOK_TEST_STALL === "1";
      // The part that reads no file is linear in the budgeted input (well inside the deadline): answered here.
      const quick = stall ? undefined : answerWithoutFiles(contract, text as string);
      if (quick !== undefined) return finish(quick);
      if (workerFile !== undefined) return judgeInWorker(workerFile, { agent, text: text as string, home }, finish, deny);
      if (stall) return;
      finish(answerCall(contract, text as string, home));
    } catch (e) {
      deny(`twinlock: the hook failed (${(e as Error)?.message ?? e}); denied`);
    }
  });
}

/** Judges `job` in a worker thread running `file`; its answer, or a deny when it fails or ends without one. */
function judgeInWorker(file: string, job: WorkerJob, finish: (a: HookAnswer) => void, deny: (reason: string) => void): void {
  const worker = new Worker(file, { workerData: job, argv: [], stdout: true, stderr: true });
  worker.once("message", (answer: HookAnswer) => finish(answer));
  worker.once("error", (e) => deny(`twinlock: the hook failed (${e?.message ?? e}); denied`));
  worker.once("exit", (code) => deny(`twinlock: the hook's worker ended (exit ${code}) before it decided; denied`));
}

/**
 * The worker's side of runHook: judge the call in workerData and post the
 * answer. Runs only in a worker thread the hook started (hook-bin.ts).
 */
export function runHookWorker(): void {
  const job = workerData as WorkerJob;
  // A test's way to make the judging block this thread for good, as synchronous work would: only the deadline ends it.
  if (process.env.TWINLOCK_HOOK_TEST_STALL === "1") Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
  parentPort?.postMessage(answerCall(AGENT_CONTRACTS[job.agent], job.text, job.home));
}

/** The answer to one call's stdin text: the pure part of the hook, apart from reading the binding. */
export function answerCall(contract: AgentContract, text: string, home: string | undefined): HookAnswer {
  const quick = answerWithoutFiles(contract, text);
  if (quick !== undefined) return quick;
  const call = callOf(contract, text) as ToolCall;
  const judgement = judgeToolCall({ call, env: process.env, home });
  return judgement.allow ? contract.pass() : contract.deny(judgement.reason);
}

/**
 * The answer when it needs no file read — bad input, a read, an unknown or
 * unreadable tool, no session named — or undefined when the binding must be
 * read. Every step is linear in the input, which its budget bounds.
 */
export function answerWithoutFiles(contract: AgentContract, text: string): HookAnswer | undefined {
  const call = callOf(contract, text);
  if ("stdout" in call) return call;
  if (call.kind === "read") return contract.pass();
  if (call.kind === "unknown" || call.kind === "unreadable") return contract.deny(reasonOf(decideToolCall(call, { unbound: "" })));
  if (!namesSession(process.env)) return contract.deny(reasonOf(decideToolCall(call, { unbound: NO_SESSION })));
  return undefined;
}

/** The call stdin `text` asks for, or the deny of input that is no call. */
function callOf(contract: AgentContract, text: string): ToolCall | HookAnswer {
  if (process.env.NODE_OPTIONS)
    return contract.deny(
      "twinlock: NODE_OPTIONS is set, so code may have been preloaded into the hook; install it with `twinlock hooks install`, which runs it as `/usr/bin/env -u NODE_OPTIONS NODE TWINLOCK hook …`; denied",
    );
  // Its budget before parsing: bytes, nesting and the largest array or object, each named in the deny.
  try {
    requireJsonWithin(BUDGETS.hookInput, text, "the hook input");
  } catch (error) {
    if (!(error instanceof BudgetError)) throw error;
    return contract.deny(`twinlock: ${error.message}; denied`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return contract.deny("twinlock: the hook input is not JSON; denied");
  }
  const duplicate = findDuplicateJsonKey(text);
  if (duplicate !== undefined) return contract.deny(`twinlock: the hook input has the key ${duplicate} twice; denied`);
  const input = readHookInput(value);
  if ("problem" in input) return contract.deny(`twinlock: ${input.problem}; denied`);
  return contract.classify(input);
}

function reasonOf(d: ReturnType<typeof decideToolCall>): string {
  return d.pass ? "" : d.reason;
}

/** All of stdin, through the descriptor (no stream machinery), refused past MAX_HOOK_INPUT. */
function readStdin(done: (error: string | undefined, text?: string) => void): void {
  const chunks: Buffer[] = [];
  let total = 0;
  const next = () => {
    const buffer = Buffer.allocUnsafe(1024 * 1024);
    read(0, buffer, 0, buffer.length, null, (error, n) => {
      if (error) {
        if (error.code === "EAGAIN") return void setTimeout(next, 2);
        if (error.code === "EOF") return done(undefined, Buffer.concat(chunks).toString("utf8"));
        return done(`stdin cannot be read (${error.code})`);
      }
      if (n === 0) return done(undefined, Buffer.concat(chunks).toString("utf8"));
      total += n;
      if (total > MAX_HOOK_INPUT) return done(`the hook input is larger than ${MAX_HOOK_INPUT} bytes, the limit for a hook input`);
      chunks.push(buffer.subarray(0, n));
      next();
    });
  };
  next();
}

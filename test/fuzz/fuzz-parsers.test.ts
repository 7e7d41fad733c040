import { folderRunStore } from "../../src/home/folder-run-store.js";
/**
 * Fuzzing of every parser twinlock has (issue 5): prompt frontmatter,
 * `twinlock.yaml`, the run file, each handoff record file, and command
 * arguments. Inputs are arbitrary and, mostly, mutations of real files
 * (bit flips, truncations, splices, JSON and YAML structure edits), so they
 * get past the first check and reach the deep ones.
 *
 * Invariants, for every case:
 * - the library throws nothing but its typed errors (UsageError,
 *   RefusalError, ConflictError, IntegrityError), and the parsers that
 *   promise never to throw do not;
 * - through `main()`: exit code 0, 1, 2 or 3; no stack frame and no
 *   "internal error"; an error is one line on stderr (or, with --json, one
 *   JSON document whose `kind` matches the exit code); exit 3 only from admit;
 * - no file changes, except the run file after a write command that
 *   succeeded (exit 0); the sandbox is restored after every case.
 *
 * Crashes the fuzzing found are pinned as `it.fails` cases at the end (BUG
 * 2–7), with file:line and a proposed fix. So that the properties keep
 * searching instead of stopping at the first of them, a case showing exactly
 * one of those crashes (KNOWN_CRASHES, knownBugOf) is counted and printed in
 * the summary line rather than failing; any other crash fails.
 *
 * Runs per property: FUZZ_RUNS when set, else 10, or 25 under TWINLOCK_SOAK=1 (.ci/run); `npm run fuzz` runs
 * 2000 and prints `fuzz: N cases passed`. FUZZ_SEED replays a failure
 * fast-check reported; FUZZ_DISCOVER=1 tolerates every crash and lists them
 * all in the summary line, to survey a long run for new bugs.
 */

import { createHash, createPrivateKey } from "node:crypto";
import {
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDocument, parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { main } from "../../src/cli/main.js";
import { demoHandoffRecords, reviseDemoHandoff, writeDemoHandoff } from "../../src/demo/demo-handoff.js";
import { ConflictError, IntegrityError, RefusalError, UsageError } from "../../src/errors/errors.js";
import { consentPairExecution } from "../../src/gate/consent-pair-execution.js";
import { freezePairHandoff } from "../../src/gate/freeze-pair-handoff.js";
import { raiseStop, resolveStop } from "../../src/gate/hard-stops.js";
import { initRun } from "../../src/gate/init-run.js";
import { reviewPairPlan } from "../../src/gate/review-pair-plan.js";
import { checkReadiness } from "../../src/handoff/check-readiness.js";
import { hashHandoff } from "../../src/handoff/hash-handoff.js";
import { loadPinnedSuite } from "../../src/home/suite-pins.js";
import { ADMISSION_STOP } from "../../src/run/admission-checks.js";
import { replayEvents } from "../../src/run/apply-event.js";
import { GENESIS, hashEvent } from "../../src/run/event-chain.js";
import type { RunEvent } from "../../src/run/run-schema.js";
import { readRunFile, readRunFileUnverified } from "../../src/store/run-file.js";
import { loadSuite, loadSuiteConfig } from "../../src/suite/load-suite.js";
import { parsePromptFile } from "../../src/suite/parse-prompt-file.js";
import { pinForTest, testHome } from "../../src/test-support/run-fixture.js";
import { generateReviewerKey } from "../../src/trust/keys.js";
import { soakCount } from "../support/soak.js";

/** Cases per property. */
const RUNS = Math.max(1, soakCount("FUZZ_RUNS", 10, 25) || 10);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
/** A generous per-test timeout that grows with the number of cases. */
const TIMEOUT = 60_000 + RUNS * 250;

const EXAMPLE_SUITE = fileURLToPath(new URL("../../examples/suite", import.meta.url));
const PLANNER_FILE = "debugging/md-29-debugging-planner.md";
const EXECUTOR_FILE = "debugging/md-30-debugging-executor.md";
const RECORD_FILES = ["evidence_index.json", "finding_register.json", "action_plan.json", "acceptance_criteria.json"] as const;

/** Cases that passed, summed over every property, printed at the end. */
let passedCases = 0;
/** Outcomes that broke a rule only in the way a bug pinned at the end of this file does, by bug. */
const knownBugHits = new Map<string, number>();

async function assertProperty<Ts>(property: fc.IRawProperty<Ts>): Promise<void> {
  await fc.assert(property, { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) });
  passedCases += RUNS;
}

// ---------------------------------------------------------------------------
// The sandbox: a suite copy with reviewer keys, a handoff, and a real run file.

interface Sandbox {
  root: string;
  suite: string;
  handoff: string;
  /** A run in dry_run_ready (every decision signed), the one the run-file fuzzing mutates. */
  runFile: string;
  /** A run in plan_review_pending, for review commands. */
  reviewRun: string;
  /** A run in execution_consent_pending, for consent commands. */
  consentRun: string;
  aliceKey: string;
  /** Every file's bytes as the gate left them, by path relative to root. */
  pristine: Map<string, Buffer>;
  hashes: string[];
}

let box: Sandbox;
const savedEnv: Record<string, string | undefined> = {};
const ENV_KEYS = ["TWINLOCK_KEY", "TWINLOCK_ACTOR", "TWINLOCK_SUITE", "TWINLOCK_DEBUG", "NO_COLOR", "FORCE_COLOR"];

beforeAll(async () => {
  for (const k of ENV_KEYS) {
    savedEnv[k] = process.env[k];
    delete process.env[k];
  }
  process.env.NO_COLOR = "1";
  const root = mkdtempSync(path.join(os.tmpdir(), "twinlock-fuzz-"));
  // The sandbox's gate home lives inside it, so putting the sandbox back puts the home back too.
  savedEnv.TWINLOCK_HOME = process.env.TWINLOCK_HOME;
  process.env.TWINLOCK_HOME = path.join(root, "home");
  const suite = path.join(root, "suite");
  cpSync(EXAMPLE_SUITE, suite, { recursive: true });
  mkdirSync(path.join(root, "keys"), { mode: 0o700 });
  const keys: Record<string, string> = {};
  for (const name of ["alice", "bob", "planner"]) {
    const { privatePem, publicKey } = generateReviewerKey();
    writeFileSync(path.join(root, "keys", `${name}.key`), privatePem, { mode: 0o600 });
    keys[name] = publicKey;
  }
  const configFile = path.join(suite, "twinlock.yaml");
  const doc = parseDocument(readFileSync(configFile, "utf8"));
  doc.set("reviewers", [
    { name: "alice", public_key: keys.alice, rights: ["review", "consent", "apply", "stop"] },
    { name: "bob", public_key: keys.bob, rights: ["review"] },
    { name: "planner", public_key: keys.planner, rights: ["freeze"] },
  ]);
  doc.set("suite_id", "fuzz-suite");
  doc.set("revoked", []);
  doc.setIn(["policies", "require_signed_receipts"], true);
  doc.setIn(["policies", "required_approvals"], 1);
  writeFileSync(configFile, doc.toString());
  await pinForTest(suite, true, testHome());

  const handoff = path.join(root, "handoff");
  const runFile = path.join(root, "run.json");
  const key = (name: string) => createPrivateKey(readFileSync(path.join(root, "keys", `${name}.key`), "utf8"));
  let records = demoHandoffRecords();
  writeDemoHandoff(handoff, records);
  await initRun({
    store: folderRunStore(testHome()),
    run: runFile,
    suiteRoot: suite,
    planners: ["MD-29"],
    mode: "APPLY_SAFE",
    environment: "staging",
    actor: "planner-agent",
  });
  const first = await freezePairHandoff({
    store: folderRunStore(testHome()),
    run: runFile,
    planner: "MD-29",
    handoffDir: handoff,
    key: key("planner"),
  });
  await reviewPairPlan({
    store: folderRunStore(testHome()),
    run: runFile,
    planner: "MD-29",
    decision: "changes_requested",
    feedback: "Add Windows coverage",
    handoffHash: first.hash,
    key: key("bob"),
  });
  records = reviseDemoHandoff(records);
  writeDemoHandoff(handoff, records);
  const second = await freezePairHandoff({ store: folderRunStore(testHome()), run: runFile, planner: "MD-29", key: key("planner") });
  await raiseStop({
    store: folderRunStore(testHome()),
    run: runFile,
    reason: "missing-backup",
    workflow: "MD-29",
    note: "no backup yet",
    actor: "ops",
  });
  await resolveStop({
    store: folderRunStore(testHome()),
    run: runFile,
    reason: "missing-backup",
    workflow: "MD-29",
    note: "backup taken",
    key: key("alice"),
  });
  await reviewPairPlan({
    store: folderRunStore(testHome()),
    run: runFile,
    planner: "MD-29",
    decision: "approved",
    handoffHash: second.hash,
    key: key("alice"),
  });
  await consentPairExecution({
    store: folderRunStore(testHome()),
    run: runFile,
    planner: "MD-29",
    approve: true,
    handoffHash: second.hash,
    key: key("alice"),
  });
  expect(readRunFile(runFile).state.workflows["MD-29"]?.state).toBe("dry_run_ready");
  const reviewRun = path.join(root, "run-review.json");
  await initRun({
    store: folderRunStore(testHome()),
    run: reviewRun,
    suiteRoot: suite,
    planners: ["MD-29"],
    mode: "APPLY_SAFE",
    actor: "planner-agent",
  });
  await freezePairHandoff({
    store: folderRunStore(testHome()),
    run: reviewRun,
    planner: "MD-29",
    handoffDir: handoff,
    key: key("planner"),
  });
  const consentRun = path.join(root, "run-consent.json");
  await initRun({
    store: folderRunStore(testHome()),
    run: consentRun,
    suiteRoot: suite,
    planners: ["MD-29"],
    mode: "APPLY_APPROVED",
    actor: "planner-agent",
  });
  await freezePairHandoff({
    store: folderRunStore(testHome()),
    run: consentRun,
    planner: "MD-29",
    handoffDir: handoff,
    key: key("planner"),
  });
  await reviewPairPlan({
    store: folderRunStore(testHome()),
    run: consentRun,
    planner: "MD-29",
    decision: "approved",
    handoffHash: second.hash,
    key: key("alice"),
  });
  expect(readRunFile(consentRun).state.workflows["MD-29"]?.state).toBe("execution_consent_pending");

  const pristine = new Map<string, Buffer>();
  const walk = (rel: string) => {
    for (const e of readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const child = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(child);
      else pristine.set(child, readFileSync(path.join(root, child)));
    }
  };
  walk("");
  box = {
    root,
    suite,
    handoff,
    runFile,
    reviewRun,
    consentRun,
    aliceKey: path.join(root, "keys", "alice.key"),
    pristine,
    hashes: [first.hash, second.hash],
  };
}, 60_000);

afterAll(() => {
  const known = [...knownBugHits].map(([bug, n]) => `${n} × ${bug}`).join(", ");
  console.log(`fuzz: ${passedCases} cases passed${known ? ` (tolerated as pinned known bugs: ${known})` : ""}`);
  if (box) rmSync(box.root, { recursive: true, force: true });
  for (const k of [...ENV_KEYS, "TWINLOCK_HOME"]) {
    if (savedEnv[k] === undefined) delete process.env[k];
    else process.env[k] = savedEnv[k];
  }
});

const abs = (rel: string) => path.join(box.root, rel);
const original = (rel: string): Buffer => {
  const b = box.pristine.get(rel);
  if (!b) throw new Error(`no pristine ${rel}`);
  return b;
};

/** Every entry under the sandbox: type, mode and content hash; compare two to prove nothing changed. */
function snapshot(): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (rel: string) => {
    for (const name of readdirSync(path.join(box.root, rel)).sort()) {
      const child = rel ? `${rel}/${name}` : name;
      // The gate home's scratch folder (a refused freeze's private copy is made and removed there).
      if (child === "home/tmp") continue;
      const p = path.join(box.root, child);
      const st = lstatSync(p);
      if (st.isSymbolicLink()) out.set(child, `link ${readlinkSync(p)}`);
      else if (st.isDirectory()) {
        out.set(child, `dir ${(st.mode & 0o7777).toString(8)}`);
        walk(child);
      } else out.set(child, `file ${(st.mode & 0o7777).toString(8)} ${createHash("sha256").update(readFileSync(p)).digest("hex")}`);
    }
  };
  walk("");
  return out;
}

function changedPaths(before: Map<string, string>, after: Map<string, string>): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((k) => before.get(k) !== after.get(k)).sort();
}

/** Put the sandbox back exactly as the gate left it: pristine bytes, nothing extra. */
function restore(): void {
  for (const [rel, bytes] of box.pristine) {
    const p = abs(rel);
    let same = false;
    try {
      same = readFileSync(p).equals(bytes);
    } catch {
      same = false;
    }
    if (!same) {
      rmSync(p, { recursive: true, force: true });
      writeFileSync(p, bytes);
    }
  }
  const now = snapshot();
  for (const rel of [...now.keys()].sort().reverse()) {
    const isPrefix = [...box.pristine.keys()].some((k) => k === rel || k.startsWith(`${rel}/`));
    if (!isPrefix) rmSync(abs(rel), { recursive: true, force: true });
  }
}

// ---------------------------------------------------------------------------
// Invariants.

const TYPED = [UsageError, RefusalError, ConflictError, IntegrityError];
const isTyped = (e: unknown) => TYPED.some((c) => e instanceof c);

function describeError(e: unknown): string {
  return e instanceof Error ? `${e.constructor.name}: ${e.message.slice(0, 300)}` : String(e);
}

/**
 * Crashes the fuzzing found, each pinned by an `it.fails` case at the end of
 * this file. A case that shows one of them, and nothing else, is counted
 * (and printed in the summary line) instead of failing its property, so the
 * properties keep searching for new bugs; every other untyped error fails.
 */
// Every crash the fuzzing found (lone surrogates, deep nesting, malformed frozen records, over-long
// run file names) is fixed, and each is kept as a strict regression case below; none is tolerated.
const KNOWN_CRASHES: Array<{ id: string; message: RegExp; only?: readonly string[] }> = [];

/**
 * The pinned crash `message` (thrown in `where`) is, if any. With
 * FUZZ_DISCOVER=1 every crash is tolerated and listed in the summary line,
 * to survey a long run for new bugs in one go.
 */
function knownCrashOf(message: string, where: string): string | undefined {
  if (process.env.FUZZ_DISCOVER) return `NEW? ${message.slice(0, 120)}`;
  return KNOWN_CRASHES.find((k) => k.message.test(message) && (k.only === undefined || k.only.includes(where)))?.id;
}

function countKnown(bug: string, where: string): void {
  const key = `${bug} (${where})`;
  knownBugHits.set(key, (knownBugHits.get(key) ?? 0) + 1);
}

/** Run `fn`; a typed error is a fine outcome, anything else (but a pinned crash) fails the property with what was thrown. */
function typedOnly<T>(what: string, fn: () => T): T | undefined {
  try {
    return fn();
  } catch (e) {
    return untypedFails(what, e);
  }
}

async function typedOnlyAsync<T>(what: string, fn: () => Promise<T>): Promise<T | undefined> {
  try {
    return await fn();
  } catch (e) {
    return untypedFails(what, e);
  }
}

function untypedFails(what: string, e: unknown): undefined {
  if (isTyped(e)) return undefined;
  const known = e instanceof Error ? knownCrashOf(`${e.constructor.name}: ${e.message}`, what) : undefined;
  if (known) {
    countKnown(known, what);
    return undefined;
  }
  throw new Error(`${what} threw an untyped ${describeError(e)}`, { cause: e });
}

interface CliOutcome {
  argv: string[];
  code: number;
  stdout: string;
  stderr: string;
}

async function cli(argv: string[]): Promise<CliOutcome> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
    },
  });
  return { argv, code, stdout, stderr };
}

const STACK_FRAME = /^\s{4}at /m;
const KIND_EXIT: Record<string, number> = { usage: 2, refused: 1, conflict: 1, integrity: 1 };
const WRITE_COMMANDS = new Set([
  "freeze-pair-handoff",
  "review-pair-plan",
  "consent-pair-execution",
  "approve-apply",
  "stop",
  "resolve-stop",
  "close",
  "admit",
]);

/**
 * The pinned bug an error message shows, if it breaks the one-line rule in
 * exactly that bug's way: BUG 2, freeze's refusal embeds V8's JSON.parse
 * message for a record file, which quotes the input around the error,
 * newlines included; BUG 6, a path given on the command line is echoed raw,
 * so a newline in it splits the line (and nothing else does).
 */
function knownBugOf(message: string, argv: readonly string[]): string | undefined {
  const body = message.replace(/\n$/, "");
  if (argv[0] === "freeze-pair-handoff" && body.includes("\n") && /: not valid JSON: /.test(body.split("\n")[0] ?? ""))
    return "BUG 2 multi-line JSON.parse message";
  // The ways a token is echoed: as a resolved path, after its option, or as given (when it is more than whitespace).
  const echoes = argv.flatMap((t, i) =>
    t.includes("\n") ? [path.resolve(box.root, t), ...(i > 0 ? [`${argv[i - 1]} ${t}`] : []), ...(/\S/.test(t) ? [t] : [])] : [],
  );
  const present = echoes.filter((e) => body.includes(e));
  if (present.length > 0 && !present.reduce((b, e) => b.split(e).join(""), body).includes("\n")) return "BUG 6 raw path echoed";
  return undefined;
}

function oneLine(message: string, where: string, argv: readonly string[]): void {
  const command = argv[0] ?? "";
  const bug = knownBugOf(message, argv);
  if (bug) {
    countKnown(bug, command);
    return;
  }
  expect(message.replace(/\n$/, ""), where).not.toMatch(/\n/);
}

/** The CLI invariants of one outcome (see the file comment). */
function expectCleanOutcome(o: CliOutcome): void {
  const where = `twinlock ${JSON.stringify(o.argv).slice(0, 400)} → exit ${o.code}\n${(o.stderr || o.stdout).slice(0, 400)}`;
  const output = o.stdout + o.stderr;
  const command = o.argv[0] ?? "";
  expect([0, 1, 2, 3], where).toContain(o.code);
  expect(output, where).not.toMatch(STACK_FRAME);
  const internal = /internal error: (.*?)(?: \(run again with --debug|"|$)/m.exec(output);
  const known = internal ? knownCrashOf(internal[1] ?? "", command) : undefined;
  if (known) {
    countKnown(known, command);
    expect(o.code, where).toBe(1);
    return;
  }
  expect(output, where).not.toMatch(/internal error/i);
  if (o.stderr !== "") {
    expect(o.stderr, where).toMatch(/^twinlock: [^\n]+\n/);
    expect(o.stderr.endsWith("\n"), where).toBe(true);
    oneLine(o.stderr, where, o.argv);
    expect([1, 2], where).toContain(o.code);
  }
  if (o.code === 3) expect(o.argv, where).toContain("admit");
  const json = ownArgs(o.argv).includes("--json");
  if (o.code !== 0 && json) {
    let doc: { ok?: boolean; stop?: string; error?: { kind: string; message: string } };
    try {
      doc = JSON.parse(o.stdout);
    } catch {
      throw new Error(`--json printed something that is not one JSON document: ${where}`);
    }
    if (doc.error) {
      expect(doc.error.kind, where).not.toBe("internal");
      expect(KIND_EXIT[doc.error.kind], where).toBe(o.code);
      oneLine(doc.error.message, where, o.argv);
    } else if (o.code === 3) expect(doc.stop, where).toBe(ADMISSION_STOP);
  } else if (o.code === 3) {
    expect(o.stdout.split("\n")[0], where).toBe(ADMISSION_STOP);
  }
}

/**
 * Run one CLI case on the sandbox: nothing may change, except the run file
 * after a write command that succeeded. The sandbox is restored afterwards.
 */
async function cliCase(argv: string[], o: { cwd?: string } = {}): Promise<CliOutcome> {
  const before = snapshot();
  const home = process.cwd();
  // The files the command line names, as sandbox paths: a successful write command may change one of them.
  const named = argv.slice(1).map((a) => path.relative(box.root, path.resolve(o.cwd ?? home, a)));
  let outcome: CliOutcome;
  try {
    if (o.cwd) process.chdir(o.cwd);
    outcome = await cli(argv);
  } finally {
    process.chdir(home);
  }
  try {
    expectCleanOutcome(outcome);
    // A whole-suite load may keep its parse cache in the gate home (frontmatter parsed from those exact bytes): not a state change.
    // The parse cache, and the home's lock queues (a folder each, kept once made; a ticket left inside one is still a change).
    const changed = changedPaths(before, snapshot()).filter(
      (p) => p !== "home/cache" && !p.startsWith("home/cache/") && !/^home\/(runs\/)?[^/]+\.queue$/.test(p),
    );
    const command = argv[0] ?? "";
    const mayWrite = WRITE_COMMANDS.has(command) && outcome.code === 0 && !(command === "admit" && argv.includes("--dry"));
    const where = `twinlock ${JSON.stringify(argv).slice(0, 400)} → exit ${outcome.code}`;
    if (mayWrite) {
      // Besides the run file, a write records its checkpoint (and a used consent) in the gate home.
      const outside = changed.filter((p) => p !== "home" && !p.startsWith("home/"));
      expect(outside.length, `at most one file outside the gate home may change: ${where}`).toBeLessThanOrEqual(1);
      const unexpected = outside.filter((p) => !named.includes(p) || !p.endsWith(".json"));
      expect(unexpected, `only the run file named may change: ${where}`).toEqual([]);
    } else if (command === "stop" && /the stop stands all the same/.test(outcome.stderr)) {
      // A person's stop of a run file the agent left unreadable still stands for the run the gate home knows lives
      // there, and says so: a stop request in the home, and nothing else, may be recorded.
      const unexpected = changed.filter((p) => !/^home\/runs(\/[^/]+\.stops(\/[^/]+\.json)?)?$/.test(p));
      expect(unexpected, `a stop that stands may record only its request: ${where}`).toEqual([]);
    } else expect(changed, `no file may change: ${where}`).toEqual([]);
  } finally {
    restore();
  }
  return outcome;
}

// ---------------------------------------------------------------------------
// Mutators.

/** Byte sequences that mean something to YAML, JSON, Markdown or UTF-8. */
const TOKENS: Buffer[] = [
  "---",
  "---\n",
  "\n",
  "\r\n",
  "\r",
  ": ",
  "- ",
  "[",
  "]",
  "{",
  "}",
  ",",
  '"',
  "'",
  "&a ",
  "*a",
  "<<: *a\n",
  "!!binary ",
  "!!str ",
  "!!set ",
  "? ",
  "|\n",
  ">-\n",
  "#",
  "\t",
  "~",
  "null",
  "true",
  ".inf",
  ".nan",
  "-.inf",
  "0x1F",
  "1e999",
  "-0",
  "\\",
  '"\\ud800"',
  "\\ud800",
  "\\u0000",
  "\u2028",
  "\uFEFF",
  "é",
  "__proto__",
  "prompt_id: MD-29\n",
  "paired_prompt_id: MD-28\n",
  "<plan_review_and_execution_gate>",
  "</runtime_markers>",
  "@EVIDENCE:E1",
  "+ACTION:A1",
  "!STOP:x",
  "sha256:",
]
  .map((t) => Buffer.from(t, "utf8"))
  .concat([
    Buffer.from([0]),
    Buffer.from([0xff]),
    Buffer.from([0xc3]),
    Buffer.from([0xed, 0xa0, 0x80]),
    Buffer.from([0xf4, 0x90, 0x80, 0x80]),
  ]);

type ByteMutation =
  | { kind: "flip"; at: number; bit: number }
  | { kind: "truncate"; at: number }
  | { kind: "delete"; at: number; length: number }
  | { kind: "insert"; at: number; bytes: Uint8Array }
  | { kind: "overwrite"; at: number; bytes: Uint8Array }
  | { kind: "splice"; from: number; length: number; at: number };

const bytesArb = fc.oneof(fc.uint8Array({ minLength: 1, maxLength: 16 }), fc.constantFrom(...TOKENS));
const byteMutationArb: fc.Arbitrary<ByteMutation> = fc.oneof(
  fc.record({ kind: fc.constant("flip" as const), at: fc.nat(), bit: fc.nat(7) }),
  fc.record({ kind: fc.constant("truncate" as const), at: fc.nat() }),
  fc.record({ kind: fc.constant("delete" as const), at: fc.nat(), length: fc.integer({ min: 1, max: 64 }) }),
  fc.record({ kind: fc.constant("insert" as const), at: fc.nat(), bytes: bytesArb }),
  fc.record({ kind: fc.constant("overwrite" as const), at: fc.nat(), bytes: bytesArb }),
  fc.record({ kind: fc.constant("splice" as const), from: fc.nat(), length: fc.integer({ min: 1, max: 512 }), at: fc.nat() }),
);

/** Apply byte mutations in turn; positions are taken modulo the current length. */
function mutateBytes(base: Uint8Array, mutations: readonly ByteMutation[]): Buffer {
  let b = Buffer.from(base);
  for (const m of mutations) {
    const pos = (n: number) => n % (b.length + 1);
    switch (m.kind) {
      case "flip": {
        if (b.length === 0) break;
        const i = m.at % b.length;
        b[i] = (b[i] as number) ^ (1 << m.bit);
        break;
      }
      case "truncate":
        b = b.subarray(0, pos(m.at));
        break;
      case "delete": {
        const i = pos(m.at);
        b = Buffer.concat([b.subarray(0, i), b.subarray(i + m.length)]);
        break;
      }
      case "insert": {
        const i = pos(m.at);
        b = Buffer.concat([b.subarray(0, i), Buffer.from(m.bytes), b.subarray(i)]);
        break;
      }
      case "overwrite": {
        const i = pos(m.at);
        b = Buffer.concat([b.subarray(0, i), Buffer.from(m.bytes), b.subarray(i + m.bytes.length)]);
        break;
      }
      case "splice": {
        const from = pos(m.from);
        const chunk = Buffer.from(b.subarray(from, from + m.length));
        const i = pos(m.at);
        b = Buffer.concat([b.subarray(0, i), chunk, b.subarray(i)]);
        break;
      }
    }
  }
  return b;
}

const mutatedBytesArb = (base: Uint8Array) => fc.array(byteMutationArb, { minLength: 1, maxLength: 4 }).map((ms) => mutateBytes(base, ms));

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = Array<string | number>;

/** Set an own property, even `__proto__`, the way JSON.parse would. */
function put(obj: Record<string, Json>, key: string, value: Json): void {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Every path in a JSON value (root first), at most `limit` of them. */
function jsonPaths(value: Json, limit = 20_000): Path[] {
  const out: Path[] = [];
  const stack: Array<[Json, Path]> = [[value, []]];
  while (stack.length > 0 && out.length < limit) {
    const [v, p] = stack.pop() as [Json, Path];
    out.push(p);
    if (Array.isArray(v)) for (const [i, x] of v.entries()) stack.push([x, [...p, i]]);
    else if (v !== null && typeof v === "object") for (const k of Object.keys(v)) stack.push([v[k] as Json, [...p, k]]);
  }
  return out;
}

function getAt(root: Json, p: Path): Json {
  let v: Json = root;
  for (const k of p) v = (v as Record<string | number, Json>)[k] as Json;
  return v;
}

/** Every string in a JSON value: the pool that same-type replacements draw from. */
function jsonStrings(value: Json): string[] {
  const out = new Set<string>();
  for (const p of jsonPaths(value)) {
    const v = getAt(value, p);
    if (typeof v === "string" && v.length < 300) out.add(v);
    const last = p[p.length - 1];
    if (typeof last === "string") out.add(last);
  }
  return [...out];
}

const SPECIAL_STRINGS = [
  "",
  " ",
  "__proto__",
  "constructor",
  "toString",
  "\u0000",
  "\ud800",
  "a\udc00b",
  "\uFEFF",
  "x".repeat(70_000),
  "MD-29",
  "MD-30",
  "MD-28",
  "MD-27",
  "MD-26",
  "MD-01",
  "MD-99",
  "md-29",
  "E1",
  "F1",
  "A1",
  "A2",
  "V1",
  "U1",
  "@EVIDENCE:E1",
  "#FINDING:F1",
  "+ACTION:A1",
  "+ACTION:A2",
  "=VERIFY:V1",
  "?UNKNOWN:U1",
  "!STOP:missing-backup",
  `sha256:${"0".repeat(64)}`,
  "sha256:xyz",
  "2026-01-01T00:00:00.000Z",
  "2026-13-45T99:99:99Z",
  "not a date",
  "approved",
  "declined",
  "changes_requested",
  "executing",
  "dry_run_ready",
  "admitted",
  "plan_approved",
  "consent_granted",
  "APPLY_APPROVED",
  "AUDIT_ONLY",
  "all",
  "../../etc/passwd",
  "/",
  "ed25519:AAAA",
];
const SPECIAL_NUMBERS = [0, -1, 1, 2, 3, 7, 100, 1.5, -0, 2 ** 31, 2 ** 53, 1e21, -1e21, 5e-324];

const deepJsonArb: fc.Arbitrary<Json> = fc
  // Nesting is kept shallow here: thousands of levels is a known crash, pinned as BUG 4 below.
  .record({ depth: fc.integer({ min: 1, max: 60 }), array: fc.boolean() })
  .map(({ depth, array }) => {
    let v: Json = "leaf";
    for (let i = 0; i < depth; i++) v = array ? [v] : { k: v };
    return v;
  });

const jsonValueArb: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) as fc.Arbitrary<Json> },
  { weight: 3, arbitrary: fc.constantFrom<Json>(...SPECIAL_STRINGS, ...SPECIAL_NUMBERS, true, false, null, [], {}) },
  { weight: 1, arbitrary: deepJsonArb },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
);

type JsonMutation =
  | { kind: "set"; target: number; value: Json }
  | { kind: "same-type"; target: number; pick: number }
  | { kind: "delete"; target: number }
  | { kind: "rename"; target: number; key: string }
  | { kind: "duplicate"; target: number }
  | { kind: "reverse"; target: number };

const jsonMutationArb: fc.Arbitrary<JsonMutation> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), target: fc.nat(), value: jsonValueArb }),
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("same-type" as const), target: fc.nat(), pick: fc.nat() }) },
  fc.record({ kind: fc.constant("delete" as const), target: fc.nat() }),
  fc.record({
    kind: fc.constant("rename" as const),
    target: fc.nat(),
    key: fc.oneof(
      fc.constantFrom("__proto__", "constructor", "toString", "", "id", "MD-29", "MD-30", "extra"),
      fc.string({ maxLength: 8 }),
    ),
  }),
  fc.record({ kind: fc.constant("duplicate" as const), target: fc.nat() }),
  fc.record({ kind: fc.constant("reverse" as const), target: fc.nat() }),
);

/** Apply JSON mutations to a deep copy; `pool` holds the strings a same-type edit swaps in. */
function mutateJson(base: Json, mutations: readonly JsonMutation[], pool: readonly string[]): Json {
  let root: Json = structuredClone(base);
  for (const m of mutations) {
    const paths = jsonPaths(root);
    const p = paths[m.target % paths.length] as Path;
    const parentPath = p.slice(0, -1);
    const key = p[p.length - 1];
    const parent = p.length > 0 ? (getAt(root, parentPath) as Record<string | number, Json>) : undefined;
    const current = getAt(root, p);
    const replace = (value: Json) => {
      if (parent === undefined) root = value;
      else if (Array.isArray(parent)) parent[key as number] = value;
      else put(parent as Record<string, Json>, key as string, value);
    };
    switch (m.kind) {
      case "set":
        replace(structuredClone(m.value));
        break;
      case "same-type": {
        if (typeof current === "string") {
          const all = [...pool, ...SPECIAL_STRINGS];
          replace(all[m.pick % all.length] as string);
        } else if (typeof current === "number") replace(SPECIAL_NUMBERS[m.pick % SPECIAL_NUMBERS.length] as number);
        else if (typeof current === "boolean") replace(!current);
        else if (current === null) replace(pool[m.pick % Math.max(1, pool.length)] ?? "x");
        else if (Array.isArray(current)) replace(m.pick % 2 === 0 ? [] : [...current, ...current]);
        else replace({});
        break;
      }
      case "delete":
        if (parent === undefined) root = null;
        else if (Array.isArray(parent)) parent.splice(key as number, 1);
        else delete (parent as Record<string, Json>)[key as string];
        break;
      case "rename":
        if (parent !== undefined && !Array.isArray(parent)) {
          const entries = Object.entries(parent).map(([k, v]) => [k === key ? m.key : k, v] as [string, Json]);
          for (const k of Object.keys(parent)) delete (parent as Record<string, Json>)[k];
          for (const [k, v] of entries) put(parent as Record<string, Json>, k, v);
        }
        break;
      case "duplicate":
        if (Array.isArray(parent)) parent.splice((key as number) + 1, 0, structuredClone(current));
        else if (Array.isArray(current) && current.length > 0) current.push(structuredClone(current[0] as Json));
        break;
      case "reverse":
        if (Array.isArray(current)) current.reverse();
        else if (Array.isArray(parent)) parent.reverse();
        break;
    }
  }
  return root;
}

const jsonMutationsArb = fc.array(jsonMutationArb, { minLength: 1, maxLength: 3 });

/** JSON as the gate writes it; a lone surrogate comes out escaped (\ud800), as a hand edit could write it. */
const toJsonText = (v: Json, indent: number) => `${JSON.stringify(v, null, indent)}\n`;

// ---------------------------------------------------------------------------
// 1. Prompt frontmatter.

describe("prompt frontmatter (parsePromptFile, loadSuite, and the commands that read the suite)", () => {
  const SUITE_COMMANDS = (root: Sandbox): string[][] => [
    ["validate", "--suite", root.suite],
    ["validate", "--suite", root.suite, "--json"],
    ["audit-bodies", "--suite", root.suite, "--check"],
    ["graph", "--suite", root.suite, "--check"],
    ["pair-status", "MD-29", "--suite", root.suite],
    ["pair-status", root.runFile, "MD-29", "--json"],
    ["admit", root.runFile, "MD-30", "--dry"],
    ["admit", root.runFile, "MD-30"],
    ["freeze-pair-handoff", root.runFile, "MD-29"],
    ["consent-pair-execution", root.consentRun, "MD-29", "--approve", "--handoff-hash", root.hashes[1] as string, "--key", root.aliceKey],
  ];

  /** parsePromptFile never throws, and every diagnostic is located in the file. */
  function expectParsed(file: string, bytes: Uint8Array): void {
    let parsed: ReturnType<typeof parsePromptFile>;
    try {
      parsed = parsePromptFile(file, bytes);
    } catch (e) {
      throw new Error(`parsePromptFile threw ${describeError(e)}`, { cause: e });
    }
    for (const d of parsed.diagnostics) {
      expect(d.file).toBe(file);
      expect(Number.isInteger(d.line) && d.line >= 1, JSON.stringify(d)).toBe(true);
      expect(Number.isInteger(d.col) && d.col >= 1, JSON.stringify(d)).toBe(true);
      expect(d.message.length).toBeGreaterThan(0);
    }
    if (parsed.prompt === undefined) expect(parsed.diagnostics.some((d) => d.severity === "error")).toBe(true);
  }

  it("parses arbitrary bytes without throwing", async () => {
    await assertProperty(
      fc.property(
        fc.oneof(
          fc.uint8Array({ maxLength: 2048 }),
          fc.string({ unit: "binary", maxLength: 600 }).map((s) => Buffer.from(s)),
          fc
            .tuple(fc.array(fc.constantFrom(...TOKENS), { maxLength: 30 }), fc.string({ maxLength: 60 }))
            .map(([ts, s]) => Buffer.concat([Buffer.from("---\n"), ...ts, Buffer.from(`\n${s}\n---\nbody\n`)])),
        ),
        (bytes) => expectParsed("fuzz/arbitrary.md", bytes),
      ),
    );
  });

  it("parses mutated bytes of a real planner prompt without throwing", async () => {
    const base = readFileSync(path.join(EXAMPLE_SUITE, PLANNER_FILE));
    await assertProperty(fc.property(mutatedBytesArb(base), (bytes) => expectParsed(PLANNER_FILE, bytes)));
  });

  it(
    "survives mutated planner and executor files in the suite: loadSuite and the suite commands",
    async () => {
      const frontmatterOf = (text: string) => {
        const m = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(text);
        if (!m) throw new Error("example prompt has no frontmatter");
        return { data: parseYaml(m[1] as string) as Json, body: m[2] as string };
      };
      const structured = (rel: string) => {
        const { data, body } = frontmatterOf(original(`suite/${rel}`).toString("utf8"));
        const pool = jsonStrings(data);
        return jsonMutationsArb.map((ms) => {
          const fm = mutateJson(data, ms, pool);
          let yamlText: string;
          try {
            yamlText = stringifyYaml(fm);
          } catch {
            yamlText = JSON.stringify(fm);
          }
          return Buffer.from(`---\n${yamlText}---\n${body}`);
        });
      };
      const caseArb = fc.record({
        rel: fc.constantFrom(PLANNER_FILE, EXECUTOR_FILE),
        how: fc.constantFrom("bytes" as const, "structure" as const),
        seed: fc.nat(),
        command: fc.nat(),
      });
      await assertProperty(
        fc.asyncProperty(
          caseArb.chain((c) =>
            (c.how === "bytes" ? mutatedBytesArb(original(`suite/${c.rel}`)) : structured(c.rel)).map((bytes) => ({ ...c, bytes })),
          ),
          async ({ rel, bytes, command }) => {
            writeFileSync(abs(`suite/${rel}`), bytes);
            try {
              expectParsed(rel, bytes);
              typedOnly("loadSuite", () => loadSuite(box.suite));
              const commands = SUITE_COMMANDS(box);
              // The mutated file is the input, so the snapshot is taken after writing it.
              await cliCase(commands[command % commands.length] as string[]);
            } finally {
              restore();
            }
          },
        ),
      );
    },
    TIMEOUT,
  );
});

// ---------------------------------------------------------------------------
// 2. twinlock.yaml.

describe("twinlock.yaml (loadSuiteConfig, loadPinnedSuite, and the commands that read policy)", () => {
  const CONFIG_COMMANDS = (b: Sandbox): string[][] => [
    ["validate", "--suite", b.suite],
    ["validate", "--suite", b.suite, "--json"],
    ["verify-receipts", b.runFile],
    ["admit", b.runFile, "MD-30", "--dry", "--json"],
    ["pair-status", b.runFile, "MD-29"],
    ["admit", b.runFile, "MD-30"],
    ["review-pair-plan", b.reviewRun, "MD-29", "--decision", "approved", "--handoff-hash", b.hashes[1] as string, "--key", b.aliceKey],
    ["review-pair-plan", b.reviewRun, "MD-29", "--decision", "approved", "--handoff-hash", b.hashes[1] as string, "--reviewer", "alice"],
    ["consent-pair-execution", b.consentRun, "MD-29", "--approve", "--handoff-hash", b.hashes[1] as string, "--key", b.aliceKey],
    ["stop", b.runFile, "--reason", "fuzz-stop"],
  ];

  function expectConfigLoads(): void {
    let result: ReturnType<typeof loadSuiteConfig>;
    try {
      result = loadSuiteConfig(box.suite);
    } catch (e) {
      throw new Error(`loadSuiteConfig threw ${describeError(e)}`, { cause: e });
    }
    for (const d of result.diagnostics) {
      expect(d.file).toBe("twinlock.yaml");
      expect(d.line >= 1 && d.col >= 1, JSON.stringify(d)).toBe(true);
    }
    // A config that is not byte for byte the pinned one is never trusted (nor an invalid one read as empty).
    const pinnedRun = { root: realpathSync(box.suite), suite_id: "fuzz-suite" };
    if (!readFileSync(path.join(box.suite, "twinlock.yaml")).equals(original("suite/twinlock.yaml")))
      expect(() => loadPinnedSuite(testHome(), pinnedRun)).toThrow(RefusalError);
    else typedOnly("loadPinnedSuite", () => loadPinnedSuite(testHome(), pinnedRun));
  }

  it(
    "loads arbitrary, mutated and restructured config text without crashing any reader",
    async () => {
      const base = original("suite/twinlock.yaml");
      const data = parseYaml(base.toString("utf8")) as Json;
      const pool = [...jsonStrings(data), "4h", "0h", "30m", "999999d", "1000000d", "review", "consent", "apply", "all"];
      const textArb = fc.oneof(
        fc.string({ unit: "binary", maxLength: 400 }).map((s) => Buffer.from(s)),
        fc.array(fc.constantFrom(...TOKENS), { maxLength: 40 }).map((ts) => Buffer.concat(ts)),
        { weight: 3, arbitrary: mutatedBytesArb(base) },
        {
          weight: 3,
          arbitrary: jsonMutationsArb.map((ms) => {
            const v = mutateJson(data, ms, pool);
            try {
              return Buffer.from(stringifyYaml(v));
            } catch {
              return Buffer.from(JSON.stringify(v));
            }
          }),
        },
      );
      await assertProperty(
        fc.asyncProperty(textArb, fc.nat(), async (bytes, command) => {
          writeFileSync(abs("suite/twinlock.yaml"), bytes);
          try {
            expectConfigLoads();
            const commands = CONFIG_COMMANDS(box);
            await cliCase(commands[command % commands.length] as string[]);
          } finally {
            restore();
          }
        }),
      );
    },
    TIMEOUT,
  );
});

// ---------------------------------------------------------------------------
// 3. The run file.

/** Rebuild what a reader verifies after a hand edit: seq, prev, head, revision, and (optionally) the replayed state. */
function rebuildRun(run: Json, restate: boolean): void {
  if (run === null || typeof run !== "object" || Array.isArray(run)) return;
  const events = run.events;
  if (!Array.isArray(events)) return;
  let prev = GENESIS;
  try {
    events.forEach((e, i) => {
      if (e === null || typeof e !== "object" || Array.isArray(e)) return;
      put(e as Record<string, Json>, "seq", i + 1);
      put(e as Record<string, Json>, "prev", prev);
      prev = hashEvent(e as unknown as RunEvent);
    });
    put(run, "head", prev);
    put(run, "revision", events.length);
  } catch {
    // The attacker's own tool failed on this input; the reader is what is under test.
  }
  if (restate) {
    try {
      put(run, "state", JSON.parse(JSON.stringify(replayEvents(events as unknown as RunEvent[]))) as Json);
    } catch {
      // Replay refused the edit; the stored state stays as it was.
    }
  }
}

describe("the run file (readRunFile, and the commands that read a run)", () => {
  const RUN_COMMANDS = (b: Sandbox): string[][] => [
    ["verify-log", b.runFile],
    ["verify-log", b.runFile, "--json"],
    ["log", b.runFile],
    ["verify-receipts", b.runFile],
    ["admit", b.runFile, "MD-30", "--dry"],
    ["admit", b.runFile, "MD-30", "--dry", "--json"],
    ["admit", b.runFile, "MD-30"],
    ["pair-status", b.runFile, "MD-29"],
    ["present", b.runFile, "MD-29"],
    ["present", b.runFile, "MD-29", "--json"],
    ["stop", b.runFile, "--reason", "fuzz-stop"],
    ["close", b.runFile, "MD-29", "--result", "abandoned", "--residual", "fuzz"],
  ];

  it(
    "reads mutated run files (bit flips, truncations, splices, JSON edits, rebuilt chains) without crashing any reader",
    async () => {
      const base = original("run.json");
      const data = JSON.parse(base.toString("utf8")) as Json;
      const pool = [...jsonStrings(data), ...box.hashes];
      const runArb = fc.oneof(
        { weight: 2, arbitrary: mutatedBytesArb(base) },
        {
          weight: 5,
          arbitrary: fc
            .record({ ms: jsonMutationsArb, rechain: fc.boolean(), restate: fc.boolean(), indent: fc.constantFrom(0, 1) })
            .map(({ ms, rechain, restate, indent }) => {
              const v = mutateJson(data, ms, pool);
              if (rechain) rebuildRun(v, restate);
              return Buffer.from(toJsonText(v, indent));
            }),
        },
      );
      await assertProperty(
        fc.asyncProperty(runArb, fc.nat(), async (bytes, command) => {
          writeFileSync(box.runFile, bytes);
          try {
            typedOnly("readRunFile", () => readRunFile(box.runFile));
            typedOnly("readRunFileUnverified", () => readRunFileUnverified(box.runFile));
            const commands = RUN_COMMANDS(box);
            await cliCase(commands[command % commands.length] as string[]);
          } finally {
            restore();
          }
        }),
      );
    },
    TIMEOUT,
  );
});

// ---------------------------------------------------------------------------
// 4. Each handoff record file.

describe("the handoff record files (checkReadiness, hashHandoff, and the commands that read a handoff)", () => {
  const HANDOFF_COMMANDS = (b: Sandbox): string[][] => [
    ["readiness", b.handoff],
    ["readiness", b.handoff, "--json"],
    ["hash", b.handoff],
    ["admit", b.runFile, "MD-30", "--dry"],
    ["freeze-pair-handoff", b.runFile, "MD-29"],
    ["freeze-pair-handoff", b.runFile, "MD-29", "--json"],
    ["freeze-pair-handoff", b.reviewRun, "MD-29"],
  ];

  it(
    "checks mutated record files without throwing, and every handoff command stays clean",
    async () => {
      const caseArb = fc.constantFrom(...RECORD_FILES).chain((file) => {
        const base = original(`handoff/${file}`);
        const data = JSON.parse(base.toString("utf8")) as Json;
        const pool = [
          ...jsonStrings(data),
          ...RECORD_FILES.flatMap((f) => jsonStrings(JSON.parse(original(`handoff/${f}`).toString("utf8")) as Json)),
        ];
        return fc.record({
          file: fc.constant(file),
          bytes: fc.oneof(
            { weight: 2, arbitrary: mutatedBytesArb(base) },
            { weight: 5, arbitrary: jsonMutationsArb.map((ms) => Buffer.from(toJsonText(mutateJson(data, ms, pool), 2))) },
          ),
          command: fc.nat(),
        });
      });
      await assertProperty(
        fc.asyncProperty(caseArb, async ({ file, bytes, command }) => {
          writeFileSync(abs(`handoff/${file}`), bytes);
          try {
            let report: ReturnType<typeof checkReadiness>;
            try {
              report = checkReadiness(box.handoff);
            } catch (e) {
              throw new Error(`checkReadiness threw ${describeError(e)}`, { cause: e });
            }
            expect(report.ready).toBe(report.problems.length === 0);
            for (const p of report.problems) expect(p.message.length).toBeGreaterThan(0);
            await typedOnlyAsync("hashHandoff", () => hashHandoff(box.handoff));
            const commands = HANDOFF_COMMANDS(box);
            await cliCase(commands[command % commands.length] as string[]);
          } finally {
            restore();
          }
        }),
      );
    },
    TIMEOUT,
  );
});

// ---------------------------------------------------------------------------
// 5. Command arguments.

describe("command arguments (main() with arbitrary argv)", () => {
  /** Junk that never names a path outside the sandbox (no "/", never ".."). */
  const junkArb = fc
    .oneof(
      fc.string({ maxLength: 16 }),
      fc.string({ unit: "binary", maxLength: 16 }),
      fc.constantFrom(
        "",
        "-",
        "--",
        "--json",
        "--debug",
        "--help",
        "-h",
        "-V",
        "--no-such-option",
        "--suite",
        "--decision",
        "--key",
        "=",
        "--=",
        "-x",
        "\u0000",
        "MD-0",
        "md-29",
        "MD-29x",
        "sha256:",
        `sha256:${"0".repeat(64)}`,
        `sha256:${"A".repeat(64)}`,
        "x".repeat(70_000),
        "0",
        "-1",
        "1e3",
        "999999999999",
        "\ud800",
        "help",
      ),
    )
    // Commands that write outside the sandbox's run files are not fuzzed here.
    .filter((s) => !s.includes("/") && s !== ".." && !["demo", "keygen", "init-run", "new-pair"].includes(s));

  const pick = <T>(real: readonly T[]): fc.Arbitrary<T | string> =>
    fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...real) }, { weight: 1, arbitrary: junkArb });

  const ids = ["MD-29", "MD-30", "MD-28", "MD-27", "MD-26", "MD-01", "MD-99"];
  const runs = [
    "run.json",
    "run.json",
    "run-review.json",
    "run-consent.json",
    "missing.json",
    "handoff",
    "suite/twinlock.yaml",
    "keys/alice.key",
  ];
  const dirs = ["handoff", "suite", "keys", "missing", "run.json", "."];
  const hashes = () => [...box.hashes, `sha256:${"0".repeat(64)}`, "sha256:0"];
  const keyFiles = ["keys/alice.key", "keys/bob.key", "suite/twinlock.yaml", "missing.key", "keys", "run.json"];
  const durations = ["30m", "4h", "2d", "0m", "999999d", "1000000d", "4", "h", "-4h", "4H"];
  const names = ["alice", "bob", "mallory", "executor-agent", "a b", ""];
  const flag = fc.constant(undefined);
  const text = pick(["a reason", "x", ""]);

  interface Spec {
    positionals: Array<fc.Arbitrary<string>>;
    options: Record<string, fc.Arbitrary<string | undefined>>;
  }
  const specs = (): Record<string, Spec> => ({
    validate: { positionals: [], options: { "--suite": pick(dirs), "--expect-pairs": pick(["6", "7", "0", "x"]) } },
    "audit-bodies": { positionals: [], options: { "--suite": pick(dirs), "--check": flag } },
    graph: { positionals: [], options: { "--suite": pick(dirs), "--format": pick(["json", "dot", "mermaid", "svg"]), "--check": flag } },
    readiness: { positionals: [pick(dirs)], options: {} },
    hash: { positionals: [pick(dirs)], options: { "--expect": pick(hashes()) } },
    present: { positionals: [pick(runs), pick(ids)], options: {} },
    "pair-status": {
      positionals: [pick([...runs, ...ids]), pick(ids)],
      options: {
        "--suite": pick(dirs),
        "--handoff-ready": flag,
        "--review-status": pick(["pending", "changes_requested", "approved", "declined", "maybe"]),
      },
    },
    log: { positionals: [pick(runs)], options: {} },
    "verify-log": { positionals: [pick(runs)], options: {} },
    "verify-receipts": { positionals: [pick(runs)], options: {} },
    admit: {
      positionals: [pick(runs), pick(ids)],
      options: {
        "--planner": pick(ids),
        "--mode": pick(["APPLY_SAFE", "APPLY_APPROVED", "DRAFT_ONLY", "AUDIT_ONLY", "apply_safe"]),
        "--environment": pick(["staging", "production", ""]),
        "--actions": pick(["A1", "A1,A2", "+ACTION:A1", "A9", ",", ""]),
        "--dry": flag,
        "--actor": pick(names),
      },
    },
    "freeze-pair-handoff": {
      positionals: [pick(runs), pick(ids)],
      options: { "--handoff": pick(dirs), "--handoff-hash": pick(hashes()), "--unchanged-because": text, "--actor": pick(names) },
    },
    "review-pair-plan": {
      positionals: [pick(runs), pick(ids)],
      options: {
        "--decision": pick(["approved", "changes_requested", "declined", "APPROVED", "yes"]),
        "--feedback": text,
        "--handoff-hash": pick(hashes()),
        "--reviewer": pick(names),
        "--key": pick(keyFiles),
      },
    },
    "consent-pair-execution": {
      positionals: [pick(runs), pick(ids)],
      options: {
        "--approve": flag,
        "--decline": flag,
        "--handoff-hash": pick(hashes()),
        "--user": pick(names),
        "--key": pick(keyFiles),
        "--expires-in": pick(durations),
      },
    },
    "approve-apply": { positionals: [pick(runs), pick(ids)], options: { "--approver": pick(names), "--key": pick(keyFiles) } },
    stop: {
      positionals: [pick(runs)],
      options: {
        "--reason": pick(["missing-backup", "!STOP:missing-backup", "Bad Reason", "-x"]),
        "--workflow": pick(ids),
        "--note": text,
        "--actor": pick(names),
      },
    },
    "resolve-stop": {
      positionals: [pick(runs)],
      options: {
        "--reason": pick(["missing-backup", "other"]),
        "--stop": pick(["1", "7", "0", "-3", "1e3", "99999999999", "x"]),
        "--note": text,
        "--workflow": pick(ids),
        "--actor": pick(names),
      },
    },
    close: {
      positionals: [pick(runs), pick(ids)],
      options: {
        "--result": pick(["verified", "failed", "rolled_back", "abandoned", "declined"]),
        "--residual": text,
        "--actor": pick(names),
      },
    },
  });

  it(
    "always ends in a clear outcome with the right exit code, and changes no file but a run file a successful write command may",
    async () => {
      const all = specs();
      const commandArb = fc.oneof(
        { weight: 12, arbitrary: fc.constantFrom(...Object.keys(all)) },
        { weight: 1, arbitrary: fc.constantFrom("--help", "-V", "--version", "--json", "help", "frobnicate", "valdate", "") },
        { weight: 1, arbitrary: junkArb },
      );
      const argvArb = commandArb.chain((command) => {
        const spec = Object.hasOwn(all, command) ? all[command] : undefined;
        const optionTokens = spec
          ? fc
              .subarray(Object.entries(spec.options))
              .chain((chosen) =>
                chosen.length === 0
                  ? fc.constant([] as string[][])
                  : fc.tuple(...chosen.map(([name, value]) => value.map((v) => (v === undefined ? [name] : [name, v])))),
              )
              .map((pairs) => pairs.flat())
          : fc.constant([] as string[]);
        const positionals = spec
          ? fc
              .tuple(...spec.positionals.map((p) => fc.option(p, { nil: undefined, freq: 8 })))
              .map((ps) => ps.filter((p) => p !== undefined))
          : fc.array(junkArb, { maxLength: 2 });
        return fc
          .record({
            positionals,
            optionTokens,
            extras: fc.array(fc.tuple(junkArb, fc.nat()), { maxLength: 2 }),
            json: fc.boolean(),
          })
          .map(({ positionals: ps, optionTokens: os, extras, json }) => {
            const tail = [...ps, ...os];
            for (const [junk, at] of extras) tail.splice(at % (tail.length + 1), 0, junk);
            if (json) tail.push("--json");
            const argv = command === "" ? tail : [command, ...tail];
            return argv.length === 0 ? ["--help"] : argv;
          });
      });
      await assertProperty(
        fc.asyncProperty(argvArb, async (argv) => {
          await cliCase(argv, { cwd: box.root });
        }),
      );
    },
    TIMEOUT,
  );

  it("prints the help on stderr and exits 2 for an empty command line (the one multi-line error, by design)", async () => {
    const o = await cli([]);
    expect(o.code).toBe(2);
    expect(o.stderr).toContain("Usage: twinlock");
    expect(o.stdout).toBe("");
  });
});

// ---------------------------------------------------------------------------
// Crashes the fuzzing found, pinned as failing cases until the source is fixed.
// These checks are strict: they do not consult KNOWN_CRASHES or knownBugOf.

describe("known crashes, pinned (each it.fails passes while the bug is there; remove .fails once fixed)", () => {
  function expectStrictlyTyped(fn: () => unknown): void {
    try {
      fn();
    } catch (e) {
      expect(isTyped(e), `threw ${describeError(e)}`).toBe(true);
    }
  }

  function expectStrictlyClean(o: CliOutcome): void {
    const output = o.stdout + o.stderr;
    expect([0, 1, 2, 3]).toContain(o.code);
    expect(output).not.toMatch(STACK_FRAME);
    expect(output).not.toMatch(/internal error/i);
    const message =
      ownArgs(o.argv).includes("--json") && o.code !== 0
        ? ((JSON.parse(o.stdout) as { error?: { message: string } }).error?.message ?? "")
        : o.stderr;
    expect(message.replace(/\n$/, "")).not.toMatch(/\n/);
  }

  /** Run `body` on the sandbox after `prepare`, then put the sandbox back. */
  async function onSandbox(prepare: () => void, body: () => Promise<void> | void): Promise<void> {
    try {
      prepare();
      await body();
    } finally {
      restore();
    }
  }

  const runText = () => original("run.json").toString("utf8");
  const notJson = (rel: string) => () => writeFileSync(abs(rel), Buffer.concat([Buffer.from("s"), original(rel)]));

  // BUG 1 (fixed meanwhile, by describeJsonError in 3179a0b; kept as a regression test): the run
  // file reader embedded V8's JSON.parse message, which quotes the input around the error with
  // its newlines, so the one-line error of SPEC §6 spanned several lines. Found by the run-file
  // fuzzing (a byte inserted before the "{").
  it("BUG 1 (fixed): a run file that is not JSON gets a one-line error", async () => {
    await onSandbox(notJson("run.json"), async () => expectStrictlyClean(await cli(["verify-log", box.runFile])));
  });

  it("BUG 1 (fixed): a run file that is not JSON gets a one-line --json error message", async () => {
    await onSandbox(notJson("run.json"), async () => expectStrictlyClean(await cli(["admit", box.runFile, "MD-30", "--dry", "--json"])));
  });

  // BUG 2: src/handoff/check-readiness.ts:59 puts V8's multi-line JSON.parse message into a
  // readiness problem, and freeze joins the problems into its refusal
  // (src/gate/freeze-pair-handoff.ts:60-64), so the refusal spans several lines. Found by the
  // handoff fuzzing ("s" before evidence_index.json). Fix: use describeJsonError
  // (src/input/parse-input.ts), as the run file reader now does, where the problem is made.
  it("BUG 2: freezing a handoff whose record file is not JSON is refused on one line", async () => {
    await onSandbox(notJson("handoff/evidence_index.json"), async () =>
      expectStrictlyClean(await cli(["freeze-pair-handoff", box.runFile, "MD-29"])),
    );
  });

  // BUG 3: canonicalJson (src/crypto/canonical-hash.ts:9, the `canonicalize` package) throws a
  // plain Error("Lone surrogate is not allowed") for a string holding an unpaired UTF-16
  // surrogate, which JSON (`"\ud800"`) and YAML (`"\ud800"`) escapes can carry into any input.
  // Nothing maps it to a typed error, so every reader that hashes reports "internal error":
  //  - a run file: verifyChain → hashEvent (src/run/event-chain.ts:34) in readRunFile
  //    (src/store/run-file.ts:57); found by the run-file fuzzing;
  //  - a handoff record: freeze hashes the new event (appendTo, src/store/run-file.ts:127 →
  //    hashEvent); found by the handoff fuzzing;
  //  - a prompt's `requires` (or another digested key): pairDigest (src/twin/pair-digest.ts:12)
  //    in init-run and consent.
  // Fix: in canonicalJson, catch the package's errors and throw a typed error naming the value
  // (IntegrityError for a run file, UsageError for input files), or reject lone surrogates where
  // each input is parsed (run schema strings, record schema strings, frontmatter values).
  it("BUG 3: a run file with a lone surrogate (\\ud800) is refused with a typed error", async () => {
    await onSandbox(
      () => writeFileSync(box.runFile, runText().replace('"actor": "ops"', '"actor": "\\ud800"')),
      () => expectStrictlyTyped(() => readRunFile(box.runFile)),
    );
  });

  it("BUG 3: verify-log on a run file with a lone surrogate gives a one-line error", async () => {
    await onSandbox(
      () => writeFileSync(box.runFile, runText().replace('"actor": "ops"', '"actor": "\\ud800"')),
      async () => expectStrictlyClean(await cli(["verify-log", box.runFile])),
    );
  });

  it("BUG 3: freezing a handoff whose record holds a lone surrogate is refused or frozen, never an internal error", async () => {
    const rel = "handoff/evidence_index.json";
    await onSandbox(
      () => writeFileSync(abs(rel), original(rel).toString("utf8").replace('"observed": "', '"observed": "\\ud800')),
      async () => {
        expect(checkReadiness(box.handoff).ready).toBe(true);
        expectStrictlyClean(await cli(["freeze-pair-handoff", box.reviewRun, "MD-29"]));
      },
    );
  });

  it("BUG 3: init-run for a pair whose executor requires a lone surrogate is refused, not an internal error", async () => {
    const rel = `suite/${EXECUTOR_FILE}`;
    await onSandbox(
      () => writeFileSync(abs(rel), original(rel).toString("utf8").replace("requires: [MD-29", 'requires: [MD-29, "\\ud800"')),
      async () => expectStrictlyClean(await cli(["init-run", abs("pinned-run.json"), "--suite", box.suite, "--planner", "MD-29"])),
    );
  });

  // BUG 6: paths given on the command line are echoed raw in error lines (e.g. "run file ${abs}
  // does not exist" in readBytes, src/store/run-file.ts; "handoff folder ${root} cannot be
  // read" in listHandoffFiles, src/handoff/hash-handoff.ts; "--suite ${given}: no such folder"
  // in findSuiteRoot, src/suite/find-suite-root.ts), so a path holding a newline splits SPEC
  // §6's one-line error. Found by the argv fuzzing (`log "\n"`). Fix: quote user-given paths
  // in messages with one helper (JSON.stringify, or escape control characters as parse-input's
  // clip/describeJsonError do).
  it("BUG 6: an error about a run path holding a newline stays on one line", async () => {
    await onSandbox(
      () => {},
      async () => expectStrictlyClean(await cli(["log", "no\nsuch.json"])),
    );
  });

  it("BUG 6: an error about a --suite path holding a newline stays on one line", async () => {
    await onSandbox(
      () => {},
      async () => expectStrictlyClean(await cli(["validate", "--suite", "no\nsuch"])),
    );
  });

  // BUG 7: a write command given a run file name longer than NAME_MAX (255 bytes) ends in
  // "internal error: ENAMETOOLONG … mkdir '<run>.lock.new-…'". exists() in
  // src/store/run-file.ts:143 takes every open error but ENOENT for "the file exists", and the
  // lock's staging mkdir (src/store/run-file-lock.ts:108) throws the raw fs error. Every write
  // command is affected (stop, resolve-stop, review, consent, freeze, close, approve-apply,
  // admit, init-run); readers already say "cannot read run file … (ENAMETOOLONG)". Found by the
  // argv fuzzing (`resolve-stop <70000 × x>`). Fix: map fs errors met while locking (anything but
  // the lock being held) to a UsageError naming the run file and the code, as readBytes does.
  it("BUG 7: a write command with an over-long run file name is refused as bad usage, not an internal error", async () => {
    await onSandbox(
      () => {},
      async () => expectStrictlyClean(await cli(["stop", abs("x".repeat(300)), "--reason", "fuzz-stop"])),
    );
  });

  // BUG 4: canonicalJson recurses once per nesting level, and an event's `data` is
  // z.record(z.string(), z.unknown()) (src/run/run-schema.ts EventSchema), so a hand-edited run
  // file nested a few thousand levels deep overflows the stack in verifyChain
  // (src/run/event-chain.ts:34, from readRunFile src/store/run-file.ts:57): RangeError,
  // reported as "internal error". Fix: bound the depth after JSON.parse in readRunFile and
  // readRunFileUnverified (an iterative walk; UsageError past, say, 64 levels).
  const deepRun = (depth: number) => () =>
    writeFileSync(box.runFile, runText().replace('"data": {', `"data": {"deep": ${"[".repeat(depth)}${"]".repeat(depth)},`));

  it("BUG 4: a run file nested thousands deep is refused with a typed error, not a stack overflow", async () => {
    await onSandbox(deepRun(50_000), () => expectStrictlyTyped(() => readRunFile(box.runFile)));
  });

  it("BUG 4: verify-log on a run file nested thousands deep gives a one-line error", async () => {
    await onSandbox(deepRun(50_000), async () => expectStrictlyClean(await cli(["verify-log", box.runFile])));
  });

  // BUG 5 (as of the gate home): the records no longer travel in the run file; what a freeze
  // event carries is its file list, and replay checks that list hashes to the recorded hash. A run
  // file edited by hand (chain rebuilt) whose file list names other bytes — the attack of showing
  // the reviewer another plan under the real hash — is refused by every reader, cleanly.
  const malformedRecords = () => {
    const run = JSON.parse(runText()) as Json;
    const events = (run as { events: Array<{ type: string; data: { files: Array<{ sha256: string }> } }> }).events;
    const frozen = events.filter((e) => e.type === "handoff_frozen").at(-1);
    if (!frozen?.data.files[0]) throw new Error("no freeze event");
    frozen.data.files[0].sha256 = "0".repeat(64);
    rebuildRun(run, false); // chain and head rebuilt; the stored state is the attacker's, unchanged
    writeFileSync(box.runFile, toJsonText(run, 1));
    expect(() => readRunFile(box.runFile)).toThrow(/its file list hashes to sha256:[0-9a-f]{64}, not the recorded/);
  };

  it("BUG 5: admit on a run file whose frozen file list was swapped stops, not an internal error", async () => {
    await onSandbox(malformedRecords, async () => expectStrictlyClean(await cli(["admit", box.runFile, "MD-30", "--dry"])));
  });

  it("BUG 5: present on a run file whose frozen file list was swapped is refused, not an internal error", async () => {
    await onSandbox(malformedRecords, async () => expectStrictlyClean(await cli(["present", box.runFile, "MD-29"])));
  });
});

/** twinlock's own arguments: after `--` come another command's (`exec … -- CMD`), whose --json is not twinlock's. */
function ownArgs(argv: readonly string[]): readonly string[] {
  return argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
}

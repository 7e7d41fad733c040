import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseDocument } from "yaml";
import { demoHandoffRecords, reviseDemoHandoff, writeDemoHandoff } from "../../demo/demo-handoff.js";
import { PACKAGE_ROOT } from "../../package-root.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { main } from "../main.js";
import { colourEnabled, makeStyle, type Style } from "../style.js";

/**
 * An admission's output with its passing checks folded into one line: the
 * demo admits five times, and a table of some twenty checks each time buried
 * the one failed check each refusal is about. The failed checks stay as
 * printed, with their details; `twinlock admit` itself prints every check.
 */
export function failedChecksOnly(output: string, s: Style): string {
  const lines = output.split("\n");
  const out: string[] = [];
  let passed = 0;
  let failed = 0;
  // Where the table of checks ends in `out`: the folded line goes there, after the failed checks.
  let tableEnd = -1;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const plain = line.replace(ANSI, "");
    if (!CHECK_LINE.test(plain)) {
      out.push(line);
      continue;
    }
    // A check is its line and the indented detail under it.
    const detail = (lines[i + 1] ?? "").startsWith(" ") ? [lines[++i] as string] : [];
    if (plain.startsWith("pass")) passed++;
    else {
      failed++;
      out.push(line, ...detail);
    }
    tableEnd = out.length;
  }
  const checks = `${passed} ${failed > 0 ? "other " : ""}check${passed === 1 ? "" : "s"}`;
  if (passed > 0)
    out.splice(tableEnd, 0, s.dim(`pass  ${failed > 0 ? "" : "all "}${checks} (folded by the demo; \`twinlock admit\` prints each)`));
  return out.join("\n");
}
const CHECK_LINE = /^(pass|FAIL) {2}\S/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal colour codes are what is removed
const ANSI = /\u001b\[[0-9;]*m/g;

/** The bundled example suite, found from the installed package. */
export const EXAMPLE_SUITE = path.join(PACKAGE_ROOT, "examples", "suite");

/**
 * `twinlock demo`: the whole gate on a copy of the bundled example suite, in
 * a temporary folder, each step shown as the command a person would type and
 * its real output, including the refusals (an admission's passing checks
 * folded into one line: see failedChecksOnly). The suite requires signed
 * receipts, so the demo makes reviewer keys first and lists them in the copy.
 */
export async function runDemo(options: CommonOptions & { keep?: boolean; processes?: boolean }): Promise<CommandResult> {
  const s = makeStyle(!options.json && colourEnabled());
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-demo-"));
  const home = process.cwd();
  const out: string[] = [];
  const steps: Array<{ command: string; exit: number }> = [];
  const say = (text: string) => out.push(text);
  const section = (title: string, why: string) => say(`\n${s.bold(s.cyan(`── ${title}`))}\n${s.dim(why)}`);
  const run = async (args: string[], expect: number) => {
    const shown = args.map((a) => (/^[A-Za-z0-9_./:=@%,+-]+$/.test(a) ? a : `"${a}"`)).join(" ");
    say(`\n${s.bold(`$ twinlock ${shown}`)}`);
    let captured = "";
    let code: number;
    if (options.processes) {
      // As typed in a shell: a process of its own, which knows only what the gate home and the files hold.
      const child = spawnSync(process.execPath, [path.join(PACKAGE_ROOT, "bin", "twinlock.cjs"), ...args], { encoding: "utf8" });
      captured = `${child.stdout ?? ""}${child.stderr ?? ""}`;
      code = child.status ?? 2;
    } else {
      const io = { stdout: (t: string) => (captured += t), stderr: (t: string) => (captured += t) };
      code = await main(args, io);
    }
    say(args[0] === "admit" || args[0] === "dry-run" ? failedChecksOnly(captured.trimEnd(), s) : captured.trimEnd());
    if (code !== 0) say(s.dim(`(exit ${code})`));
    steps.push({ command: `twinlock ${shown}`, exit: code });
    if (code !== expect) throw new Error(`demo step \`twinlock ${shown}\` exited ${code}, expected ${expect}:\n${captured}`);
    return captured;
  };
  const hashOf = (text: string) => /sha256:[0-9a-f]{64}/.exec(text)?.[0] ?? "";
  const suite = "suite";
  const aliceKey = path.join("keys", "alice.key");
  const bobKey = path.join("keys", "bob.key");
  const plannerKey = path.join("keys", "planner-agent.key");
  const savedHome = process.env.TWINLOCK_HOME;
  // The walk-through uses its own gate home and nothing of the caller's: no team store, no default suite.
  const savedElse = { TWINLOCK_STORE: process.env.TWINLOCK_STORE, TWINLOCK_SUITE: process.env.TWINLOCK_SUITE };
  delete process.env.TWINLOCK_STORE;
  delete process.env.TWINLOCK_SUITE;

  try {
    process.chdir(dir);
    // The person's gate home for this walk-through: pins, checkpoints, used consents, frozen bytes.
    process.env.TWINLOCK_HOME = path.join(dir, "gate-home");
    say(s.bold("twinlock demo: the plan-review and exact-twin execution gate, step by step"));
    say(s.dim(`working in ${dir}, on a copy of the bundled example suite (${EXAMPLE_SUITE})`));
    cpSync(EXAMPLE_SUITE, suite, { recursive: true });

    section(
      "0. Reviewer keys",
      "The suite requires signed receipts: a person's key signs each decision, so an agent without the key cannot approve.",
    );
    const keyOf = (text: string) => /ed25519:[A-Za-z0-9+/=]+/.exec(text)?.[0] ?? "";
    const alice = keyOf(await run(["keygen", "--name", "alice", "--out", "keys"], 0));
    const bob = keyOf(await run(["keygen", "--name", "bob", "--out", "keys", "--rights", "review"], 0));
    const planner = keyOf(await run(["keygen", "--name", "planner-agent", "--out", "keys", "--rights", "freeze"], 0));
    listReviewers(path.join(suite, "twinlock.yaml"), [
      { name: "alice", public_key: alice, rights: ["review", "consent", "apply", "stop", "verify"] },
      { name: "bob", public_key: bob, rights: ["review"] },
      { name: "planner-agent", public_key: planner, rights: ["freeze"] },
    ]);
    say(
      s.dim(
        "(the keys are now listed in suite/twinlock.yaml: alice may review, consent, apply, lift stops and close verified; bob may only review; the planner agent may only freeze)",
      ),
    );

    section(
      "0b. The gate home and the pin",
      "The person's gate home (TWINLOCK_HOME, out of the agent's reach) pins the suite it trusts: its folder, suite_id, the sha256 of twinlock.yaml and its pairs. Runs are judged by the pin, never by what a run file names.",
    );
    say(s.dim(`$ export TWINLOCK_HOME=${process.env.TWINLOCK_HOME}`));
    await run(["trust", "pin", "--suite", suite, "--key", aliceKey], 0);

    section("1. The suite", "Validate the prompt suite: every pair resolves to its one exact twin.");
    await run(["validate", "--suite", suite], 0);
    await run(["pair-status", "MD-29", "--suite", suite], 0);

    section("2. A run and a frozen handoff", "The planner MD-29 investigated a flaky test and wrote its handoff; freeze it for review.");
    await run(demoInitRunArgs(suite), 0);
    let records = demoHandoffRecords();
    writeDemoHandoff("handoff", records);
    await run(["readiness", "handoff"], 0);
    const h1 = hashOf(await run(["freeze-pair-handoff", "run.json", "MD-29", "--handoff", "handoff", "--key", plannerKey], 0));

    section(
      "2b. Refused: a run on the agent's own copy of the suite",
      "The agent copies the suite and lists its own key as a reviewer; the gate home never pinned that copy.",
    );
    cpSync(suite, "agent-suite", { recursive: true });
    await run(["init-run", "agent-run.json", "--suite", "agent-suite", "--planner", "MD-29", "--actor", "planner-agent"], 1);

    section("3. Review round 1: changes requested", "The reviewer reads the frozen plan and asks for changes. Feedback is never approval.");
    await run(["pair-status", "run.json", "MD-29"], 0);
    await run(
      [
        "review-pair-plan",
        "run.json",
        "MD-29",
        "--decision",
        "changes_requested",
        "--feedback",
        "Add Windows coverage and rollback evidence",
        "--handoff-hash",
        h1,
        "--key",
        bobKey,
      ],
      0,
    );

    section(
      "4. Revise, re-verify, re-freeze",
      "The planner applies the feedback to every affected record; the new freeze gets a new hash and revision.",
    );
    records = reviseDemoHandoff(records);
    writeDemoHandoff("handoff", records);
    const h2 = hashOf(await run(["freeze-pair-handoff", "run.json", "MD-29", "--key", plannerKey], 0));
    await run(["present", "run.json", "MD-29"], 0);

    section(
      '5. Refused: "looks fine" for an earlier revision',
      "Approval must name the exact version the reviewer read; revision 1 is no longer the plan.",
    );
    await run(["review-pair-plan", "run.json", "MD-29", "--decision", "approved", "--handoff-hash", h1, "--key", aliceKey], 1);

    section("6. Refused: an agent approves without a reviewer key", "The agent knows the hash and the command, but cannot sign.");
    await run(["review-pair-plan", "run.json", "MD-29", "--decision", "approved", "--handoff-hash", h2, "--reviewer", "alice"], 1);

    section("7. Review round 2: approved", "Alice approves the exact revision 2 hash with her key. Approval does not execute anything.");
    await run(["review-pair-plan", "run.json", "MD-29", "--decision", "approved", "--handoff-hash", h2, "--key", aliceKey], 0);

    section('8. Refused: "the original request already said execute"', "Without an explicit consent receipt, admission stops.");
    await run(["admit", "run.json", "MD-30"], 3);

    section("9. Execution consent", "One explicit question naming the exact executor's ID and title; bob's key has no consent right.");
    await run(["pair-status", "run.json", "MD-29"], 0);
    await run(["consent-pair-execution", "run.json", "MD-29", "--approve", "--handoff-hash", h2, "--key", bobKey], 1);
    await run(
      ["consent-pair-execution", "run.json", "MD-29", "--approve", "--handoff-hash", h2, "--key", aliceKey, "--expires-in", "4h"],
      0,
    );

    section("10. Refused: an alternate executor", "MD-28 is a real executor of the suite, but not MD-29's twin.");
    await run(["admit", "run.json", "MD-28"], 3);

    section(
      "11. Refused: a plan file changed after approval",
      "Someone edits action_plan.json after consent; admission re-hashes the folder and names the file.",
    );
    const planFile = path.join("handoff", "action_plan.json");
    const original = readFileSync(planFile, "utf8");
    writeFileSync(planFile, original.replace("Hold cartCache.mu", "Rewrite the cart cache and hold cartCache.mu"));
    await run(["admit", "run.json", "MD-30", "--dry"], 3);
    writeFileSync(planFile, original);
    say(s.dim("(the edit is undone: the folder hashes to the approved version again)"));

    section(
      "12. Admission of the exact twin",
      "Every check passes, signatures re-verified; the consent is used up and the workflow is executing.",
    );
    cpSync("run.json", "run-before-admission.json");
    await run(["admit", "run.json", "MD-30", "--actor", "executor-agent", "--checkout", "approved"], 0);
    await run(["admit", "run.json", "MD-30"], 3);

    section(
      "12b. Refused: the old run file restored, to use the consent again",
      "The agent puts back its copy from before admission. The gate home remembers the admission: the copy is rolled forward and the consent is still used.",
    );
    cpSync("run-before-admission.json", "run.json");
    await run(["admit", "run.json", "MD-30"], 3);

    section(
      "13. The executor's change",
      "MD-30 writes the regression test (A1) and the lock in cart/cache.go (A2), and runs each acceptance criterion's command.",
    );
    mkdirSync("cart", { recursive: true });
    writeFileSync(path.join("cart", "cache_race_test.go"), "package cart\n\n// TestCartCacheRace reproduces the race with a barrier.\n");
    writeFileSync(
      path.join("cart", "cache.go"),
      "package cart\n\n// UpdatePrice holds cartCache.mu for the read-modify-write of totals.\n",
    );
    writeFileSync("changed.txt", "cart/cache_race_test.go\ncart/cache.go\n");
    say(s.dim("(wrote cart/cache_race_test.go and cart/cache.go; changed.txt lists them, as git diff --name-only would)"));

    section(
      "13b. Refused: verified without the change",
      "Verifying is a person's call on the executed change itself: without the changed files there is nothing to hold against the plan.",
    );
    await run(["close", "run.json", "MD-29", "--result", "verified", "--actor", "alice"], 2);

    section(
      "14. Verify, close and audit",
      "A person holds the recorded change against the admitted actions and criteria and closes verified; the log shows every decision, bound to its hash and signed.",
    );
    await run(
      [
        "close",
        "run.json",
        "MD-29",
        "--result",
        "verified",
        "--changed-files",
        "changed.txt",
        ...DEMO_CRITERIA.flatMap((c) => ["--criterion", c]),
        "--residual",
        "?UNKNOWN:U1 (nightly repricer) handed to the payments team",
        "--key",
        aliceKey,
      ],
      0,
    );
    await run(["verify-receipts", "run.json"], 0);
    await run(["log", "run.json"], 0);
    await run(["verify-log", "run.json"], 0);
    say(`\n${s.green("The gate held: only MD-30, only on the approved revision 2, only once, with every decision signed and on record.")}`);
    if (options.keep) say(s.dim(`kept ${dir}`));
  } finally {
    if (savedHome === undefined) delete process.env.TWINLOCK_HOME;
    else process.env.TWINLOCK_HOME = savedHome;
    for (const [name, value] of Object.entries(savedElse)) if (value !== undefined) process.env[name] = value;
    process.chdir(home);
    if (!options.keep) rmSync(dir, { recursive: true, force: true });
  }
  return { exitCode: 0, text: out.join("\n"), json: { ok: true, steps } };
}

/** Each acceptance criterion of the demo's revision 2 with the command that passed it, as `close --criterion` takes it. */
const DEMO_CRITERIA = [
  "V1=passed:go test -run TestCartCacheRace -count=50 ./cart/",
  "V2=passed:go test -race -count=500 ./cart/...",
  "V3=passed:GOOS=windows go test ./cart/...",
];

/** The demo's run: MD-29 → MD-30 in APPLY_SAFE on staging, started by the planner agent. */
export function demoInitRunArgs(suite: string): string[] {
  return [
    "init-run",
    "run.json",
    "--suite",
    suite,
    "--planner",
    "MD-29",
    "--mode",
    "APPLY_SAFE",
    "--environment",
    "staging",
    "--actor",
    "planner-agent",
  ];
}

/** Add reviewers to a suite's twinlock.yaml and require signed receipts, keeping its comments. */
export function listReviewers(configFile: string, reviewers: Array<{ name: string; public_key: string; rights: string[] }>): void {
  const doc = parseDocument(readFileSync(configFile, "utf8"));
  doc.set("reviewers", reviewers);
  doc.setIn(["policies", "require_signed_receipts"], true);
  writeFileSync(configFile, doc.toString({ flowCollectionPadding: false }));
}

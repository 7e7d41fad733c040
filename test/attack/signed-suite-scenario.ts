/**
 * A person's signed setup, driven through the CLI as typed in a shell: a copy
 * of the example suite listing alice (review, consent, apply, stop) and a
 * freeze-only planner key, pinned by alice in a fresh gate home of its own,
 * and the steps up to a consent. The attack tests change the suite (as the
 * agent can) between the steps and ask admission.
 */
import { cpSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type CliRun, runCli, runCliJson } from "../../src/test-support/run-cli.js";
import { EXAMPLE_SUITE } from "../../src/test-support/temp-suite.js";

export interface Scenario {
  dir: string;
  suite: string;
  handoff: string;
  home: string;
  runFile: string;
  alice: string;
  planner: string;
  /** The executor MD-30's prompt file in the suite copy. */
  executorFile: string;
}

const made: string[] = [];

export async function makeScenario(): Promise<Scenario> {
  const dir = realpathSync(mkdtempSync(path.join(os.tmpdir(), "twinlock-attack-")));
  made.push(dir);
  const suite = path.join(dir, "suite");
  cpSync(EXAMPLE_SUITE, suite, { recursive: true });
  const handoff = path.join(dir, "handoff");
  cpSync(path.join(EXAMPLE_SUITE, "..", "handoff"), handoff, { recursive: true });
  const keys = path.join(dir, "keys");
  const pub = async (name: string, rights: string) => {
    const r = await runCli(["keygen", "--name", name, "--out", keys, "--rights", rights]);
    if (r.code !== 0) throw new Error(r.output);
    return readFileSync(path.join(keys, `${name}.pub`), "utf8")
      .trim()
      .split(/\s+/)[0] as string;
  };
  const alicePub = await pub("alice", "review,consent,apply,stop");
  const plannerPub = await pub("planner-agent", "freeze");
  const config = path.join(suite, "twinlock.yaml");
  const text = readFileSync(config, "utf8");
  const reviewers = `reviewers:\n  - name: alice\n    public_key: ${alicePub}\n    rights: [review, consent, apply, stop]\n  - name: planner-agent\n    public_key: ${plannerPub}\n    rights: [freeze]\n`;
  writeFileSync(config, text.slice(0, text.indexOf("reviewers:")) + reviewers + text.slice(text.indexOf("revoked:")));
  return {
    dir,
    suite,
    handoff,
    home: path.join(dir, "home"),
    runFile: path.join(dir, "run.json"),
    alice: path.join(keys, "alice.key"),
    planner: path.join(keys, "planner-agent.key"),
    executorFile: path.join(suite, "debugging", "md-30-debugging-executor.md"),
  };
}

/** Run a CLI step in the scenario's home; throws unless it exits 0. */
export async function step(s: Scenario, argv: string[]): Promise<string> {
  const r = await runCli([...argv, "--home", s.home]);
  if (r.code !== 0) throw new Error(`twinlock ${argv.join(" ")} exited ${r.code}:\n${r.output}`);
  return r.output;
}

/** The person pins the suite as it is now. */
export async function pin(s: Scenario): Promise<void> {
  await step(s, ["trust", "pin", "--suite", s.suite, "--key", s.alice]);
}

/** `init-run FILE --planner MD-29 --mode MODE` as the person asks it, refused or not (FILE: the scenario's run file). */
export function tryInitRun(s: Scenario, mode: string, runFile = s.runFile): Promise<CliRun> {
  return runCli(["init-run", runFile, "--suite", s.suite, "--planner", "MD-29", "--mode", mode, "--home", s.home]);
}

/** init-run; then the planner freezes and the person approves and consents (all signed). */
export async function initRun(s: Scenario, mode: string): Promise<void> {
  await step(s, ["init-run", s.runFile, "--suite", s.suite, "--planner", "MD-29", "--mode", mode, "--environment", "staging"]);
}

export async function freezeReviewConsent(s: Scenario): Promise<void> {
  await step(s, ["freeze-pair-handoff", s.runFile, "MD-29", "--handoff", s.handoff, "--key", s.planner]);
  const hashed = await runCli(["hash", s.handoff]);
  const hash = hashed.stdout.trim();
  await step(s, ["review-pair-plan", s.runFile, "MD-29", "--decision", "approved", "--handoff-hash", hash, "--key", s.alice]);
  await step(s, ["consent-pair-execution", s.runFile, "MD-29", "--approve", "--handoff-hash", hash, "--key", s.alice]);
}

/** `admit RUN MD-30` (recording), as JSON. */
export async function admitExecutor(s: Scenario): Promise<{ admitted: boolean; failed: string[]; output: string }> {
  const r = await runCliJson<{ admitted?: boolean; checks?: Array<{ id: string; ok: boolean }> }>([
    "admit",
    s.runFile,
    "MD-30",
    "--home",
    s.home,
  ]);
  return { admitted: r.json.admitted === true, failed: (r.json.checks ?? []).filter((c) => !c.ok).map((c) => c.id), output: r.output };
}

/** Replace one frontmatter line of MD-30 (or add `extra` after `exact_twin_only: true`). */
export function editExecutor(s: Scenario, edit: (text: string) => string): void {
  writeFileSync(s.executorFile, edit(readFileSync(s.executorFile, "utf8")));
}

export function removeScenarios(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/**
 * The whole attempt after the pin: init-run, freeze, review, consent and
 * admission of MD-30 in `mode`. Returns where the gate refused it (the first
 * step that did not succeed, with its output), or the admission's result.
 */
export async function attemptAdmission(s: Scenario, mode: string): Promise<{ admitted: boolean; refusedAt: string; output: string }> {
  try {
    await initRun(s, mode);
  } catch (error) {
    return { admitted: false, refusedAt: "init-run", output: (error as Error).message };
  }
  try {
    await freezeReviewConsent(s);
  } catch (error) {
    return { admitted: false, refusedAt: "freeze, review or consent", output: (error as Error).message };
  }
  const r = await admitExecutor(s);
  return { admitted: r.admitted, refusedAt: r.admitted ? "" : "admit", output: r.output };
}

/** The person tries to pin the suite as it is now: the refusal's output, or undefined when it was pinned. */
export async function pinRefused(s: Scenario): Promise<string | undefined> {
  const r = await runCli(["trust", "pin", "--suite", s.suite, "--key", s.alice, "--home", s.home]);
  return r.code === 0 ? undefined : r.output;
}

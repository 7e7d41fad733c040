/**
 * Runs for the server section, made through the built library (dist/) the
 * way the CLI makes them, only without a process per step: each run has its
 * own folder with its run file and its own ready handoff (SPEC §4 records),
 * and goes init-run (DRAFT_ONLY, staging, all actions, budget 10) → freeze
 * (signed by the planner's freeze key) → review approved → consent granted
 * (both signed by the reviewer's key), so it ends in `dry_run_ready`, where
 * an admission check runs every check and would admit. Runs take the
 * suite's pairs in turn, and each gets its own agent token for its run and
 * pair (the default scopes of `twinlock token create`).
 *
 * `test/bench/server-bench-shape.test.ts` holds the runs to that state.
 */
import { createPrivateKey } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { realisticPrompts } from "./generate-real-suite.mjs";
import { writeHandoff } from "./handoff-fixture.mjs";

/** The planner → executor pairs of the realistic suite of `prompts` prompts. */
export function realisticPairs(prompts = 257) {
  return realisticPrompts(prompts)
    .prompts.filter((p) => p.role === "investigative" && p.twin)
    .map((p) => ({ planner: p.id, executor: p.twin }));
}

/** The library functions the runs are made with, from the build. */
export async function loadGateLibrary(root) {
  const lib = await import(join(root, "dist", "index.js"));
  const { createAgentToken } = await import(join(root, "dist", "server", "agent-tokens.js"));
  return { ...lib, createAgentToken };
}

/**
 * Make runs `from`…`to − 1` under `dir` on `signed` (makeSignedSuite's
 * result: suite, home, key, freezeKey), `concurrency` at a time. Returns,
 * per run: index, runId, runFile, planner, executor, handoffHash, token.
 */
export async function prepareGateRuns({ lib, signed, dir, from = 0, to, concurrency = 8, prompts = 257 }) {
  const home = lib.openGateHome(signed.home);
  const store = lib.folderRunStore(home);
  const key = createPrivateKey(readFileSync(signed.key));
  const freezeKey = createPrivateKey(readFileSync(signed.freezeKey));
  const pairs = realisticPairs(prompts);
  const runs = new Array(to - from);
  let next = from;
  const worker = async () => {
    while (next < to) {
      const index = next++;
      const { planner, executor } = pairs[index % pairs.length];
      const runDir = join(dir, `run-${String(index).padStart(5, "0")}`);
      mkdirSync(runDir, { recursive: true });
      const handoff = join(runDir, "handoff");
      writeHandoff(handoff, planner);
      const runFile = join(runDir, "run.json");
      const created = await lib.initRun({
        store,
        run: runFile,
        suiteRoot: signed.suite,
        planners: [planner],
        mode: "DRAFT_ONLY",
        environment: "staging",
        actions: "all",
        budget: 10,
        actor: "bench",
      });
      const frozen = await lib.freezePairHandoff({
        store,
        run: runFile,
        planner,
        handoffDir: handoff,
        key: freezeKey,
        actor: "bench-planner",
      });
      await lib.reviewPairPlan({ store, run: runFile, planner, decision: "approved", handoffHash: frozen.hash, key });
      const consent = await lib.consentPairExecution({ store, run: runFile, planner, approve: true, handoffHash: frozen.hash, key });
      if (consent.workflow.state !== "dry_run_ready")
        throw new Error(`run ${runFile} ended in ${consent.workflow.state}, not dry_run_ready, after consent`);
      const runId = created.state.run_id;
      const { token } = await lib.createAgentToken(home, { agent: `bench-agent-${index}`, runId, planner });
      runs[index - from] = { index, runId, runFile, planner, executor, handoffHash: frozen.hash, token };
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  return runs;
}

/** The status request of one run, as its agent sends it. */
export function statusRequest(run) {
  return {
    method: "GET",
    path: `/api/runs/${run.runId}/pairs/${encodeURIComponent(run.planner)}`,
    headers: { authorization: `Bearer ${run.token}` },
  };
}

/** The admission check of one run's executor, as its agent sends it: `{}`, so the consented mode, environment and actions. */
export function admissionCheckRequest(run) {
  return {
    method: "POST",
    path: `/api/runs/${run.runId}/executors/${encodeURIComponent(run.executor)}/admission-check`,
    headers: { authorization: `Bearer ${run.token}` },
    body: "{}",
  };
}

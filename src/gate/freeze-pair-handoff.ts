import path from "node:path";
import { RefusalError, UsageError } from "../errors/errors.js";
import { checkReadiness, type ReadinessReport } from "../handoff/check-readiness.js";
import { hashHandoff } from "../handoff/hash-handoff.js";
import { requireTransition, requireWorkflow } from "../run/refuse-transition.js";
import type { Workflow } from "../run/run-schema.js";
import { type LoadedRun, updateRunFile } from "../store/run-store.js";
import { loadSuite } from "../suite/load-suite.js";
import { resolveExactTwin } from "../twin/resolve-exact-twin.js";

export interface FreezeInput {
  runFile: string;
  planner: string;
  /** The handoff folder; defaults to the one frozen before. */
  handoffDir?: string;
  /** A caller's assertion of the hash; must equal the computed one. */
  handoffHash?: string;
  /** Why an identical re-freeze after requested changes is right (shown to the reviewer). */
  unchangedBecause?: string;
  actor: string;
  now?: () => Date;
}

export interface FreezeResult {
  run: LoadedRun;
  workflow: Workflow;
  readiness: ReadinessReport;
  hash: string;
  revision: number;
  /** Whether earlier review or consent receipts were voided by this freeze. */
  voided: boolean;
}

/**
 * Freeze a pair's handoff (SPEC §4, §5): readiness must pass, the hash is
 * computed here (a given hash is only an assertion), the revision goes up,
 * earlier review and consent become void, and the workflow moves on to
 * plan review. Refuses a re-freeze that changes nothing.
 */
export async function freezePairHandoff(input: FreezeInput): Promise<FreezeResult> {
  const runDir = path.dirname(path.resolve(input.runFile));
  let readiness: ReadinessReport | undefined;
  let hash = "";
  const { run, result } = await updateRunFile(
    input.runFile,
    async (current) => {
      const wf = requireWorkflow(current.state.workflows, input.planner);
      requireTransition(input.runFile, wf, "handoff_frozen", "freeze the handoff");
      const resolved = resolveExactTwin(loadSuite(current.state.suite.root), wf.planner);
      if (!resolved.ok || resolved.twin.executor.id !== wf.executor) {
        throw new RefusalError(
          `${wf.planner} no longer resolves to ${wf.executor} in the suite (${resolved.ok ? `it now names ${resolved.twin.executor.id}` : resolved.reasons.join("; ")}); fix the suite or start a new run`,
        );
      }
      const dirGiven = input.handoffDir ?? (wf.handoff ? path.resolve(runDir, wf.handoff.dir) : undefined);
      if (!dirGiven) throw new UsageError(`no handoff folder: pass --handoff DIR the first time you freeze ${wf.planner}`);
      const dir = path.resolve(dirGiven);
      readiness = checkReadiness(dir);
      if (!readiness.ready) {
        const lines = readiness.problems.slice(0, 10).map((p) => `${p.file}${p.record ? ` [${p.record}]` : ""}: ${p.message}`);
        throw new RefusalError(
          `handoff ${dir} is not ready to freeze (${readiness.problems.length} problem${readiness.problems.length > 1 ? "s" : ""}): ${lines.join("; ")}`,
          { problems: readiness.problems },
        );
      }
      const digest = await hashHandoff(dir);
      hash = digest.hash;
      if (input.handoffHash !== undefined && input.handoffHash !== digest.hash) {
        throw new RefusalError(
          `--handoff-hash ${input.handoffHash} does not match the handoff: twinlock computed ${digest.hash}; the files changed or the hash is for another version`,
          {
            given: input.handoffHash,
            computed: digest.hash,
          },
        );
      }
      const same = wf.handoff?.hash === digest.hash;
      if (same && wf.state === "plan_revision_pending" && !input.unchangedBecause) {
        throw new RefusalError(
          `nothing was revised: the handoff still hashes to ${digest.hash}, the version the reviewer asked to change; revise it, or pass --unchanged-because TEXT to tell the reviewer why no change is needed`,
        );
      }
      if (same && wf.state !== "plan_revision_pending") {
        throw new RefusalError(`the handoff has not changed since revision ${wf.revision} (${digest.hash}); there is nothing to re-freeze`);
      }
      const rel = path.relative(runDir, dir);
      const storedDir = rel === "" ? "." : rel.startsWith("..") || path.isAbsolute(rel) ? dir : rel.split(path.sep).join("/");
      const revision = wf.revision + 1;
      const voided = wf.reviews.length > 0 || wf.consents.length > 0;
      return {
        events: [
          {
            type: "handoff_frozen",
            actor: input.actor,
            data: {
              planner: wf.planner,
              revision,
              hash: digest.hash,
              dir: storedDir,
              files: digest.files,
              records: readiness.records as unknown as Record<string, unknown>,
              open_unknowns: readiness.openUnknowns,
              unchanged_because: same ? (input.unchangedBecause ?? null) : null,
            },
          },
          { type: "review_requested", actor: input.actor, data: { planner: wf.planner, revision, hash: digest.hash } },
        ],
        result: { revision, voided },
      };
    },
    { now: input.now },
  );
  const workflow = run.state.workflows[input.planner] as Workflow;
  return { run, workflow, readiness: readiness as ReadinessReport, hash, revision: result.revision, voided: result.voided };
}

import { describeNextStep } from "../../next-step.js";
import { legalNextStep } from "../../refuse-transition.js";
import type { AdmissionCheckModule } from "../admission-facts.js";

/** The workflow is `dry_run_ready`. */
export const workflowReady: AdmissionCheckModule = {
  id: "state",
  name: "the workflow is dry_run_ready",
  reads: ["workflow", "runFile"],
  judge(f) {
    const wf = f.workflow;
    return {
      ok: wf?.state === "dry_run_ready",
      detail:
        wf === undefined || wf.state === "dry_run_ready"
          ? `state ${wf?.state ?? "none"}`
          : `state ${wf.state}; ${legalNextStep(describeNextStep(wf.state, { run: f.runFile ?? "RUN", planner: wf.planner, executor: wf.executor, hash: wf.handoff?.hash }))}`,
    };
  },
  rejudge: { offline: "replay refuses an `admitted` event from any state but dry_run_ready, so a verified chain holds it" },
};

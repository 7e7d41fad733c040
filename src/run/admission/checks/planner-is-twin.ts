import type { AdmissionCheckModule } from "../admission-facts.js";

/** Check 1: the planner is the requested executor's reciprocal `paired_prompt_id` in the pinned suite. */
export const plannerIsTwin: AdmissionCheckModule = {
  id: "1",
  name: "planner is the executor's reciprocal paired_prompt_id",
  reads: ["workflow", "suiteTwin", "requestedPlanner", "requestedExecutor", "state"],
  judge(f) {
    const wf = f.workflow;
    const verdict = f.suiteTwin.verdict;
    const pairs = () =>
      Object.values(f.state.workflows)
        .map((w) => `${w.planner}→${w.executor}`)
        .join(", ");
    return {
      ok: wf !== undefined && verdict?.ok === true && f.suiteTwin.plannerOfRequested === wf.planner,
      detail:
        wf === undefined && f.requestedPlanner !== undefined
          ? `--planner ${f.requestedPlanner} is not a planner of this run (pairs: ${pairs()})`
          : wf === undefined
            ? `${f.requestedExecutor} is the exact twin of no planner in this run (pairs: ${pairs()}); Requested: ${f.requestedExecutor}, Result: rejected`
            : f.suiteTwin.problem
              ? f.suiteTwin.problem
              : verdict && !verdict.ok
                ? `${verdict.reason}; ${f.requestedExecutor}'s paired_prompt_id is ${f.suiteTwin.plannerOfRequested ?? "null"}`
                : `requested ${f.requestedExecutor}: its paired_prompt_id is ${f.suiteTwin.plannerOfRequested ?? "null"}; ${wf.planner}'s exact twin is ${f.suiteTwin.twinOfPlanner ?? "none"}`,
    };
  },
  rejudge: {
    offline:
      "the suite's prompts as pinned at the admission are not in the run; verify judges the pair's files against the plan and the trust file instead",
  },
};

const run = (runId: string) => `/api/runs/${encodeURIComponent(runId)}`;
const pair = (runId: string, planner: string) => `${run(runId)}/pairs/${encodeURIComponent(planner)}`;

/** The JSON API's paths, in one place: the pages' forms post to these, and so do agents and scripts. */
export const apiPaths = {
  runs: () => "/api/runs",
  run,
  pair,
  plan: (runId: string, planner: string) => `${pair(runId, planner)}/plan`,
  freeze: (runId: string, planner: string) => `${pair(runId, planner)}/freeze`,
  review: (runId: string, planner: string) => `${pair(runId, planner)}/review`,
  consent: (runId: string, planner: string) => `${pair(runId, planner)}/consent`,
  applyApproval: (runId: string, planner: string) => `${pair(runId, planner)}/apply-approval`,
  result: (runId: string, planner: string) => `${pair(runId, planner)}/result`,
  verifiedClose: (runId: string, planner: string) => `${pair(runId, planner)}/verified-close`,
  admissionCheck: (runId: string, executor: string) => `${run(runId)}/executors/${encodeURIComponent(executor)}/admission-check`,
  export: (runId: string) => `${run(runId)}/export`,
  stops: (runId: string) => `${run(runId)}/stops`,
  liftStop: (runId: string) => `${run(runId)}/stops/lift`,
};

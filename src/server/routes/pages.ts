import { requireWorkflow } from "../../run/refuse-transition.js";
import { renderRevisionPage } from "../../web/render-revision-page.js";
import { renderRunListPage } from "../../web/render-run-list-page.js";
import { renderRunPage } from "../../web/render-run-page.js";
import type { ReceiptView } from "../../web/view-model.js";
import type { GateApp, GateContext } from "../gate-context.js";
import { HttpProblem } from "../http-problem.js";
import { pagePaths, revisionPageView, runListView, runPageView } from "../page-views.js";
import { param, promptParam } from "../request-fields.js";
import { filterRuns, parseRunListFilters } from "../run-list-filters.js";

/** The receipt kinds a decision on a revision page records, as `?recorded=` names them. */
const RECORDED_KINDS = new Set(["review", "consent", "apply_approval", "verification"]);

/**
 * The receipt a decision has just recorded, for the confirmation: the newest
 * of the kind `?recorded=` names, by this reviewer, on this revision. The
 * parameter only picks what to look for: what is shown is the gate's record.
 */
function justRecorded(receipts: readonly ReceiptView[], recorded: string | undefined, reviewer: string | null, revision: number) {
  if (recorded === undefined || !RECORDED_KINDS.has(recorded) || reviewer === null) return null;
  return [...receipts].reverse().find((r) => r.kind === recorded && r.who === reviewer && r.revision === revision) ?? null;
}

/** The review pages, for signed-in reviewers only: the run list (filtered by `?state=` and `?suite=`), a run, a pair (sent on to its revision) and a revision. */
export function addPageRoutes(app: GateApp, ctx: GateContext): void {
  const { store } = ctx;
  app.get("/", async (c) => {
    ctx.requireSignedInPage(c);
    const principal = c.get("principal");
    const filters = parseRunListFilters({ state: c.req.query("state"), suite: c.req.query("suite") });
    const view = await runListView(store, ctx.layoutFor(c), await store.list());
    const rights = principal.kind === "reviewer" ? principal.session.rights : [];
    const suites = [...new Set(view.runs.map((r) => r.suiteId))].sort();
    const runs = filterRuns(view.runs, filters);
    return c.html(renderRunListPage({ ...view, runs, filters, suites, total: view.runs.length, rights, now: ctx.now().toISOString() }));
  });
  app.get("/runs/:runId", async (c) => {
    ctx.requireSignedInPage(c);
    const { run } = await ctx.findRun(param(c, "runId"));
    return c.html(renderRunPage(runPageView(run, ctx.layoutFor(c), true)));
  });
  app.get("/runs/:runId/pairs/:planner", async (c) => {
    ctx.requireSignedInPage(c);
    const { run } = await ctx.findRun(param(c, "runId"));
    const wf = requireWorkflow(run.state.workflows, promptParam(c, "planner"));
    return c.redirect(wf.handoff ? pagePaths.revision(run.state.run_id, wf.planner, wf.revision) : pagePaths.run(run.state.run_id), 303);
  });
  app.get("/runs/:runId/pairs/:planner/revisions/:revision", async (c) => {
    ctx.requireSignedInPage(c);
    const { ref, run } = await ctx.findRun(param(c, "runId"));
    const wf = requireWorkflow(run.state.workflows, promptParam(c, "planner"));
    const revision = Number(param(c, "revision"));
    if (!Number.isInteger(revision) || revision < 1) throw new HttpProblem(404, "UNKNOWN_REVISION", "revisions are numbered from 1");
    const layout = ctx.layoutFor(c);
    const view = await revisionPageView(store, ref, run, wf, revision, layout, true);
    return c.html(
      renderRevisionPage({ ...view, confirmation: justRecorded(view.receipts, c.req.query("recorded"), layout.reviewer, revision) }),
    );
  });
}

import { describe, expect, it } from "vitest";
import { sampleRunList } from "../test-support/sample-views.js";
import { renderRunListPage } from "./render-run-list-page.js";
import type { RunSummaryView } from "./view-model.js";

describe("renderRunListPage", () => {
  it("lists each run by its title linking to its page, with its ID, its suite and when it changed, the exact time as a title", () => {
    const html = renderRunListPage({ ...sampleRunList(), now: "2026-05-01T12:00:00.000Z" });
    expect(html).toContain("<h1>Runs</h1>");
    expect(html).toContain(
      `<a href="/runs/run_0123456789abcdef">Apply the fix; Rotate keys</a> <code class="run-id">run_0123456789abcdef</code>`,
    );
    expect(html).toContain("<td>mission-directives</td>");
    expect(html).toContain(`<time datetime="2026-05-01T10:00:00.000Z" title="2026-05-01T10:00:00.000Z">2 hours ago</time>`);
  });

  it("lists first the runs with a pair waiting on this reviewer's rights, marking the pair, then the others", () => {
    const list = sampleRunList();
    const [run] = list.runs as [RunSummaryView];
    const consent: RunSummaryView = {
      ...run,
      runId: "run_1111111111111111",
      url: "/runs/run_1111111111111111",
      pairs: [{ planner: "MD-35", executor: "MD-36", executorTitle: "Migrate", state: "execution_consent_pending", revision: 1 }],
    };
    const html = renderRunListPage({ ...list, runs: [run, consent], rights: ["consent"] });
    const waiting = html.slice(html.indexOf('<section id="waiting"'), html.indexOf('<section id="other-runs"'));
    expect(waiting).toContain("Waiting on you (1)");
    expect(waiting).toContain("run_1111111111111111");
    expect(waiting).toContain(`execution consent pending</span> <strong class="waits-on-you">waits on you</strong>`);
    expect(waiting).not.toContain("run_0123456789abcdef");
    expect(html.slice(html.indexOf('<section id="other-runs"'))).toContain("run_0123456789abcdef");
    const reviewer = renderRunListPage({ ...list, runs: [run, consent], rights: ["review"] });
    expect(reviewer.slice(reviewer.indexOf('<section id="waiting"'), reviewer.indexOf('<section id="other-runs"'))).toContain(
      "run_0123456789abcdef",
    );
  });

  it("shows each pair, planner → executor, with its state in words", () => {
    const html = renderRunListPage(sampleRunList());
    expect(html).toContain(
      `<code>MD-29</code> → <code>MD-30</code>: <span class="state state-plan_review_pending" data-state="plan_review_pending">plan review pending</span>`,
    );
    expect(html).toContain(">investigating</span>");
  });

  it("offers filters by state and suite as a plain GET form with a label for each choice, the applied ones selected", () => {
    const html = renderRunListPage({
      ...sampleRunList(),
      filters: { state: "plan_review_pending", suite: "mission-directives" },
      suites: ["mission-directives", "other-suite"],
      total: 3,
    });
    expect(html).toContain(`<form class="run-filters" method="get" action="/" role="search" aria-label="Filter the runs">`);
    expect(html).toContain(`<label for="filter-state">State</label>\n<select id="filter-state" name="state">`);
    expect(html).toContain(`<label for="filter-suite">Suite</label>\n<select id="filter-suite" name="suite">`);
    expect(html).toContain(`<option value="plan_review_pending" selected>plan review pending</option>`);
    expect(html).toContain(`<option value="mission-directives" selected>mission-directives</option>`);
    expect(html).toContain(`<option value="other-suite">other-suite</option>`);
    expect(html).toContain(`<option value="">Any state</option>`);
    expect(html).toContain(
      `1 of 3 runs is shown: with a pair plan review pending, of the suite mission-directives. <a href="/">Show every run</a>`,
    );
  });

  it("keeps the filters and says no run matches when the filters leave none, unlike an empty list", () => {
    const html = renderRunListPage({ ...sampleRunList(), runs: [], filters: { state: "failed", suite: null }, total: 2 });
    expect(html).toContain(`<option value="failed" selected>failed</option>`);
    expect(html).toContain("No run is shown: with a pair failed.");
    expect(html).not.toContain("No runs yet");
  });

  it("says there are no runs yet instead of an empty table", () => {
    const html = renderRunListPage({ ...sampleRunList(), runs: [] });
    expect(html).toContain("No runs yet");
    expect(html).not.toContain("<table");
  });
});

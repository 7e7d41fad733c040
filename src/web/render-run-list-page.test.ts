import { describe, expect, it } from "vitest";
import { sampleRunList } from "../test-support/sample-views.js";
import { renderRunListPage } from "./render-run-list-page.js";

describe("renderRunListPage", () => {
  it("lists each run with its ID linking to its page, its suite and when it changed", () => {
    const html = renderRunListPage(sampleRunList());
    expect(html).toContain("<h1>Runs</h1>");
    expect(html).toContain(`<a href="/runs/run_0123456789abcdef"><code>run_0123456789abcdef</code></a>`);
    expect(html).toContain("<td>mission-directives</td>");
    expect(html).toContain(`<time datetime="2026-05-01T10:00:00.000Z">`);
  });

  it("shows each pair, planner → executor, with its state in words", () => {
    const html = renderRunListPage(sampleRunList());
    expect(html).toContain(
      `<code>MD-29</code> → <code>MD-30</code>: <span class="state state-plan_review_pending" data-state="plan_review_pending">plan review pending</span>`,
    );
    expect(html).toContain(">investigating</span>");
  });

  it("says there are no runs yet instead of an empty table", () => {
    const html = renderRunListPage({ ...sampleRunList(), runs: [] });
    expect(html).toContain("No runs yet");
    expect(html).not.toContain("<table");
  });
});

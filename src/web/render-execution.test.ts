import { describe, expect, it } from "vitest";
import { sampleExecution, sampleRevisionPage } from "../test-support/sample-views.js";
import { renderExecution } from "./render-execution.js";
import { renderRevisionPage } from "./render-revision-page.js";

describe("renderExecution", () => {
  const html = renderExecution(sampleExecution());

  it("counts the deviations first: an action not done, a file outside the plan, a criterion without evidence, a failed one", () => {
    expect(html).toMatch(
      /^<p class="execution-summary" role="note"><strong class="mark mark-bad deviation">.*4 deviations from the approved plan\.<\/strong>/,
    );
  });

  it("says each deviation in words beside a ✗, never by colour alone", () => {
    expect(html).toContain(
      `<th scope="row"><code>+ACTION:A2</code></th><td>(not given)</td><td><strong class="mark mark-bad deviation"><span aria-hidden="true">✗</span> not done</strong>`,
    );
    expect(html).toMatch(
      /<code>\.github\/workflows\/deploy\.yml<\/code> <code class="hash">sha256:a+<\/code> <strong[^>]*><span aria-hidden="true">✗<\/span> outside the plan<\/strong>/,
    );
    expect(html).toContain(
      `<code>=VERIFY:C1</code></th><td><strong class="mark mark-bad deviation"><span aria-hidden="true">✗</span> no evidence</strong>`,
    );
    expect(html).toContain(`<span aria-hidden="true">✗</span> failed</strong></td><td><code>make check</code>`);
  });

  it("marks what held as done, inside the plan or passed, and a deleted file as deleted", () => {
    expect(html).toContain(
      `<code>+ACTION:A1</code></th><td><code>config/pool.yaml</code></td><td><span class="mark mark-ok"><span aria-hidden="true">✓</span> done</span>`,
    );
    expect(html).toContain(
      `<code>old.txt</code> deleted <span class="mark mark-ok"><span aria-hidden="true">✓</span> inside the plan</span>`,
    );
    expect(html).toContain("Closed <strong>failed</strong> by alice");
  });

  it("says an execution without deviations conforms", () => {
    const ok = renderExecution({
      ...sampleExecution(),
      actions: [{ id: "A1", target: null, done: true }],
      changedFiles: [],
      criteria: [{ id: "C1", results: [{ result: "passed", command: "make test" }] }],
    });
    expect(ok).toContain("The executed change conforms to the approved plan.");
    expect(ok).not.toContain("deviation");
  });

  it("escapes agent-chosen paths and commands", () => {
    const v = sampleExecution();
    v.changedFiles[0] = { path: "<img src=x onerror=alert(1)>", sha256: null, outsidePlan: true };
    expect(renderExecution(v)).toContain("<code>&lt;img src=x onerror=alert(1)&gt;</code>");
  });
});

describe("the revision page with an execution", () => {
  it("shows the plan versus execution section first, listed in the page's contents; none before close", () => {
    const page = renderRevisionPage({ ...sampleRevisionPage(), execution: sampleExecution() });
    expect(page).toContain(`<section id="execution" aria-labelledby="execution-h"><h2 id="execution-h">Plan versus execution</h2>`);
    expect(page).toContain(`<li><a href="#execution">Plan versus execution</a></li>`);
    expect(renderRevisionPage(sampleRevisionPage())).not.toContain(`id="execution"`);
  });
});

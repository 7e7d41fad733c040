import { describe, expect, it } from "vitest";
import { renderAgentDocuments } from "./render-agent-documents.js";
import { agentDocumentsRenderStats, RENDER_CACHE_ENTRIES, renderAgentDocumentsOffThread } from "./render-agent-documents-off-thread.js";

describe("renderAgentDocumentsOffThread", () => {
  it("renders on a worker what the page would render on its thread, once for documents asked for at the same time", async () => {
    const docs = { executorBody: "<tool_policy>\n| a |\n|---|\n| 1 | 2 |\n</tool_policy>", report: "# Report\n\nDone." };
    const before = agentDocumentsRenderStats().rendered;
    const [a, b] = await Promise.all([renderAgentDocumentsOffThread(docs), renderAgentDocumentsOffThread(docs)]);
    expect(a).toEqual(renderAgentDocuments(docs));
    expect(b).toBe(a);
    expect(agentDocumentsRenderStats().rendered).toBe(before + 1);
  });

  it("tells a report apart from none and from text moved between the documents", async () => {
    const none = await renderAgentDocumentsOffThread({ executorBody: "x", report: null });
    const moved = await renderAgentDocumentsOffThread({ executorBody: "", report: "x" });
    expect(none.report).toBeNull();
    expect(moved.report).not.toBeNull();
  });

  it(`keeps at most ${RENDER_CACHE_ENTRIES} renderings, the least recently used out first`, async () => {
    for (let i = 0; i <= RENDER_CACHE_ENTRIES; i++) await renderAgentDocumentsOffThread({ executorBody: `body ${i}`, report: null });
    expect(agentDocumentsRenderStats().kept).toBe(RENDER_CACHE_ENTRIES);
    // The first is gone: asked again, it is rendered again.
    const before = agentDocumentsRenderStats().rendered;
    await renderAgentDocumentsOffThread({ executorBody: "body 0", report: null });
    expect(agentDocumentsRenderStats().rendered).toBe(before + 1);
  });
});

import { createHash } from "node:crypto";
import { runOffThread } from "../offload/run-off-thread.js";
import type { AgentDocuments, RenderedAgentDocuments } from "./render-agent-documents.js";

/** At most this many rendered revisions are kept (the oldest used goes first). */
export const RENDER_CACHE_ENTRIES = 64;

/** At most this many UTF-16 units of rendered HTML are kept in all (a rendering of 128 KiB of Markdown can be ten times that). */
export const RENDER_CACHE_UNITS = 32 * 1024 * 1024;

const cache = new Map<string, { rendered: RenderedAgentDocuments; units: number }>();
const pending = new Map<string, Promise<RenderedAgentDocuments>>();
let cachedUnits = 0;
let renders = 0;

/** The key a rendering is kept under: the SHA-256 of exactly what is rendered, so a kept one is never another's. */
function keyOf(docs: AgentDocuments): string {
  const h = createHash("sha256");
  h.update(`executor ${docs.executorBody.length}\n`);
  h.update(docs.executorBody);
  h.update(docs.report === null ? "\nno report" : `\nreport ${docs.report.length}\n`);
  if (docs.report !== null) h.update(docs.report);
  return h.digest("hex");
}

/**
 * A revision page's agent-written Markdown rendered on a worker thread
 * (runOffThread), never on the server's: the renderer's time grows with
 * what the agent wrote, and a page GET must not hold every other request
 * behind it. A rendering is kept by the hash of what it rendered (bounded
 * by RENDER_CACHE_ENTRIES and RENDER_CACHE_UNITS, least recently used
 * first out), so a revision asked for again costs a hash; the same
 * documents asked for at once are rendered once.
 */
export async function renderAgentDocumentsOffThread(docs: AgentDocuments): Promise<RenderedAgentDocuments> {
  const key = keyOf(docs);
  const kept = cache.get(key);
  if (kept) {
    cache.delete(key);
    cache.set(key, kept);
    return kept.rendered;
  }
  const underWay = pending.get(key);
  if (underWay) return underWay;
  renders++;
  const work = runOffThread("renderAgentDocuments", docs).then(
    (rendered) => {
      pending.delete(key);
      keep(key, rendered);
      return rendered;
    },
    (error: unknown) => {
      pending.delete(key);
      throw error;
    },
  );
  pending.set(key, work);
  return work;
}

function keep(key: string, rendered: RenderedAgentDocuments): void {
  const units = rendered.executor.length + (rendered.report?.length ?? 0);
  if (units > RENDER_CACHE_UNITS) return;
  cache.set(key, { rendered, units });
  cachedUnits += units;
  while (cache.size > RENDER_CACHE_ENTRIES || cachedUnits > RENDER_CACHE_UNITS) {
    const [oldest, entry] = cache.entries().next().value as [string, { units: number }];
    cache.delete(oldest);
    cachedUnits -= entry.units;
  }
}

/** How many renderings are kept now, and how many were sent to a worker since the process started (tests). */
export function agentDocumentsRenderStats(): { kept: number; rendered: number } {
  return { kept: cache.size, rendered: renders };
}

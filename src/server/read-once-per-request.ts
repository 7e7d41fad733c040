import { AsyncLocalStorage } from "node:async_hooks";
import type { LoadedRun } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";

/** The reads one request made so far, by run reference. */
type RequestReads = Map<string, Promise<LoadedRun>>;

/**
 * A store whose `read` of a run happens at most once per request: every
 * later read of the same run within the request (a route's own, then the
 * library function's it calls, then the MCP tool's) gets that first
 * verified read, so a large run is parsed and checked once per request,
 * not once per layer. Anything that writes (`update`, `create`,
 * `importRun`) forgets the request's reads, so a read after a decision
 * sees the decision. Outside a request (`run`), reads go to the store.
 */
export function readOncePerRequest(store: RunStore): { store: RunStore; run: <T>(work: () => Promise<T>) => Promise<T> } {
  const reads = new AsyncLocalStorage<RequestReads>();
  const forget = () => reads.getStore()?.clear();
  const wrapped: RunStore = {
    get home() {
      return store.home;
    },
    get label() {
      return store.label;
    },
    get serverState() {
      return store.serverState;
    },
    get notifications() {
      return store.notifications;
    },
    read(ref) {
      const mine = reads.getStore();
      if (!mine) return store.read(ref);
      let got = mine.get(ref);
      if (!got) {
        got = store.read(ref);
        mine.set(ref, got);
        // A failed read is not kept: a caller may ask again after handling it (admission reads the run unverified then).
        got.catch(() => mine.delete(ref));
      }
      return got;
    },
    readUnverified: (ref) => store.readUnverified(ref),
    async create(ref, drafts, now) {
      forget();
      return store.create(ref, drafts, now);
    },
    async update(ref, decide, options) {
      forget();
      try {
        return await store.update(ref, decide, options);
      } finally {
        forget();
      }
    },
    async importRun(ref, file, frozen) {
      forget();
      return store.importRun(ref, file, frozen);
    },
    findConsumedConsent: (hash) => store.findConsumedConsent(hash),
    resolve: (runId) => store.resolve(runId),
    runFolder: (ref) => store.runFolder(ref),
    ready: () => store.ready(),
    close: () => store.close(),
    list: () => store.list(),
  };
  return { store: wrapped, run: (work) => reads.run(new Map(), work) };
}

import { type AdmissionCheckModule, frozenHandoff } from "../admission-facts.js";
import { describeChanges } from "../describe-changes.js";

/** Check 4: no handoff file changed since freezing (the live folder re-hashed now). */
export const handoffUnchanged: AdmissionCheckModule = {
  id: "4",
  name: "no handoff file changed since freezing",
  reads: ["workflow", "rehash"],
  judge(f) {
    if ("error" in f.rehash) return { ok: false, detail: `cannot re-hash the handoff: ${f.rehash.error}` };
    const handoff = frozenHandoff(f);
    const changes = handoff ? describeChanges(handoff.files, f.rehash.files) : [];
    return {
      ok: handoff !== null && f.rehash.hash === handoff.hash,
      detail:
        handoff === null
          ? "nothing is frozen"
          : f.rehash.hash === handoff.hash
            ? `re-hashed now: ${f.rehash.hash}`
            : `re-hashed now: ${f.rehash.hash}, frozen ${handoff.hash}: ${changes.join(", ") || "content differs"}`,
    };
  },
  rejudge: { offline: "the live handoff folder at the admission is gone by the time CI runs; the frozen hash is in the chain" },
};

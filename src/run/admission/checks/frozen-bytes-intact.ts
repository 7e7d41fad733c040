import { type AdmissionCheckModule, frozenHandoff } from "../admission-facts.js";

/** The frozen bytes in the gate home are intact. */
export const frozenBytesIntact: AdmissionCheckModule = {
  id: "frozen",
  name: "the frozen bytes in the gate home are intact",
  reads: ["workflow", "frozenBytes"],
  judge(f) {
    const handoff = frozenHandoff(f);
    return {
      ok: handoff !== null && f.frozenBytes.length === 0,
      detail:
        handoff === null
          ? "nothing is frozen"
          : f.frozenBytes.length
            ? f.frozenBytes.join("; ")
            : `${handoff.files.length} files, ${handoff.hash}`,
    };
  },
  rejudge: { offline: "the frozen bytes live in the gate home; CI holds the change to the frozen plan's targets instead" },
};

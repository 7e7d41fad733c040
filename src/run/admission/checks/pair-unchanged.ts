import type { AdmissionCheckModule } from "../admission-facts.js";

/** The suite's pair metadata is unchanged since the run began. */
export const pairUnchanged: AdmissionCheckModule = {
  id: "pair",
  name: "the suite's pair metadata is unchanged since the run began",
  reads: ["workflow", "suiteTwin"],
  judge(f) {
    const wf = f.workflow;
    return {
      ok: wf !== undefined && f.suiteTwin.pairDigest === wf.pair_digest,
      detail:
        wf === undefined
          ? "no workflow"
          : f.suiteTwin.pairDigest === wf.pair_digest
            ? `digest ${wf.pair_digest}`
            : `the pairing changed (run began with ${wf.pair_digest}, suite now ${f.suiteTwin.pairDigest ?? "does not resolve"}); a changed pairing needs a new run`,
    };
  },
  rejudge: { offline: "the suite's pairing at the admission is not in the run (only its digest at the start)" },
};

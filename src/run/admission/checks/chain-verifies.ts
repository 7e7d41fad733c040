import type { AdmissionCheckModule } from "../admission-facts.js";

/** The event chain verifies and is the gate home's checkpoint. */
export const chainVerifies: AdmissionCheckModule = {
  id: "chain",
  name: "the event chain verifies and is the gate home's checkpoint",
  reads: ["chain", "state"],
  judge: (f) => ({
    ok: f.chain.ok,
    detail: f.chain.ok ? `${f.state.run_id}: ${Object.keys(f.state.workflows).length} workflow(s)` : f.chain.reason,
  }),
  rejudge: { offline: "CI verifies the whole chain (and the gate's signature over its head) before it re-judges any admission" },
};

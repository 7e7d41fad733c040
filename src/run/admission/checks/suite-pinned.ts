import type { AdmissionCheckModule } from "../admission-facts.js";

/** The run's suite is pinned in the gate home, its policy and the pair's prompt files unchanged since pinning. */
export const suitePinned: AdmissionCheckModule = {
  id: "pin",
  name: "the run's suite is pinned in the gate home; its twinlock.yaml and the pair's prompt files are unchanged since pinning",
  reads: ["pin"],
  judge: (f) => ({ ok: f.pin.ok, detail: f.pin.detail }),
  rejudge: { offline: "the pins live in the gate home, not the run; CI pins the policy itself (verify --trust)" },
};

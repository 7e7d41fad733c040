import { readFileSync } from "node:fs";
import path from "node:path";
import { demoHandoffRecords } from "../demo/demo-handoff.js";
import type { RunFile } from "../run/run-schema.js";
import { publicKeyLine } from "../trust/keys.js";
import { makeGateRun } from "./run-fixture.js";
import { ALICE_KEY, driveSignedToExecuting } from "./signed-run.js";

/** One real record for a lazily built schema: its name (lazy-schema.ts) and a value it accepts. */
export interface SchemaSample {
  name: string;
  value: unknown;
}

/**
 * Real records for the schemas the generated fast validators stand in for:
 * a signed run driven to `executing` in APPLY_APPROVED mode (its file, state,
 * events and each event's data, the home's checkpoint, pins and identity),
 * the demo handoff's records, a twinlock.yaml with every section and a
 * reviewer registry. The caller removes the run's folder (`removeGateRuns`).
 */
export async function demoRunFile(): Promise<SchemaSample[]> {
  const g = makeGateRun();
  await driveSignedToExecuting(g, { mode: "APPLY_APPROVED" });
  const run = JSON.parse(readFileSync(g.runFile, "utf8")) as RunFile;
  const home = (file: string) => JSON.parse(readFileSync(path.join(g.home, file), "utf8")) as unknown;
  const workflow = Object.values(run.state.workflows)[0];
  if (!workflow?.handoff) throw new Error("the demo run has no frozen handoff");
  const records = demoHandoffRecords();
  const samples: SchemaSample[] = [
    { name: "run-schema.RunFileSchema", value: run },
    { name: "run-schema.RunStateSchema", value: run.state },
    { name: "run-schema.WorkflowSchema", value: workflow },
    { name: "run-schema.EventSchema", value: run.events[1] },
    { name: "manifest-schema.ManifestEntrySchema", value: workflow.handoff.files[0] },
    { name: "run-checkpoints.CheckpointSchema", value: home(path.join("runs", `${run.state.run_id}.json`)) },
    { name: "suite-pins.PinsFileSchema", value: home("pins.json") },
    { name: "gate-home.HomeFileSchema", value: home("home.json") },
    { name: "handoff-records.EvidenceIndexSchema", value: records.evidence },
    { name: "handoff-records.FindingRegisterSchema", value: records.findings },
    { name: "handoff-records.ActionPlanSchema", value: records.actions },
    { name: "handoff-records.AcceptanceCriteriaSchema", value: records.criteria },
    {
      name: "suite-config.SuiteConfigSchema",
      value: {
        suite_id: "demo-suite",
        declared_pairs: 1,
        body_rules: { markers: ["@EVIDENCE:"], gate_block: "gate", copied_item_min_length: 20 },
        reviewers: [{ name: "alice", public_key: publicKeyLine(ALICE_KEY), rights: ["review", "consent"] }],
        policies: { require_signed_receipts: true, required_approvals: 1, separate_duties: false, consent_expiry: "4h" },
        prompts: ["prompts/**/*.md"],
        exclude: ["docs/**"],
        handoff: { format: "mission-directives" },
      },
    },
    {
      name: "reviewer-registry.RegistryFileSchema",
      value: {
        format: "twinlock-reviewers/1",
        reviewers: [
          {
            name: "bob",
            rights: ["review"],
            user_id: "dXNlcg",
            enrolled_at: "2026-11-30T10:00:00.000Z",
            revoked: false,
            revoked_at: null,
            credentials: [
              {
                credential_id: "Y3JlZA",
                public_key: "webauthn:pQECAyYgASFYIA",
                sign_count: 0,
                transports: ["internal"],
                created_at: "2026-11-30T10:00:00.000Z",
                rp_id: "localhost",
                origins: ["http://localhost:7420"],
              },
            ],
          },
        ],
        invitations: [],
      },
    },
  ];
  for (const event of run.events) samples.push({ name: `apply-event.${event.type}`, value: event.data });
  return samples;
}

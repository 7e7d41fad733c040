/**
 * `dry_run_required: true` on an executor, dropped or disguised by an agent
 * that can edit its working copy of the suite. Found by an attack round: the
 * pin bound twinlock.yaml and the pairs but not the prompt files, a malformed
 * value read as "not required", and a merge key (`<<`) read differently from
 * YAML 1.1 tools; each was admitted to APPLY_SAFE with no dry run. Now the pin
 * binds each pair member's file, a pair member with a problem is neither
 * pinned nor run, and a merge key is refused.
 */
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/test-support/run-cli.js";
import {
  admitExecutor,
  attemptAdmission,
  editExecutor,
  freezeReviewConsent,
  initRun,
  makeScenario,
  pin,
  pinRefused,
  removeScenarios,
} from "./signed-suite-scenario.js";

afterAll(removeScenarios);

const declare = (line: string) => (text: string) => text.replace("exact_twin_only: true\n", `exact_twin_only: true\n${line}\n`);

describe("dry_run_required an agent edits away after the pin", () => {
  it("control: the pinned executor declaring dry_run_required: true is refused an APPLY admission without a passed dry run", async () => {
    const s = await makeScenario();
    editExecutor(s, declare("dry_run_required: true"));
    await pin(s);
    await initRun(s, "APPLY_SAFE");
    await freezeReviewConsent(s);
    const r = await admitExecutor(s);
    expect(r.admitted).toBe(false);
    expect(r.failed).toContain("dry-run");
  });

  it("the line deleted after pinning: refused at init-run, as the executor file is not the one pinned", async () => {
    const s = await makeScenario();
    editExecutor(s, declare("dry_run_required: true"));
    await pin(s);
    // The agent, in its working copy of the suite.
    editExecutor(s, (t) => t.replace("dry_run_required: true\n", ""));
    const r = await attemptAdmission(s, "APPLY_SAFE");
    expect(r.admitted, r.output).toBe(false);
    expect(r.refusedAt).toBe("init-run");
    expect(r.output).toMatch(/MD-30's prompt file \(debugging\/md-30-debugging-executor\.md\) changed since suite \S+ was pinned/);
  });

  it("dry_run_required: yes (true to a person and to YAML 1.1 readers; validate says FIELD_TYPE): the suite is not pinned", async () => {
    const s = await makeScenario();
    editExecutor(s, declare("dry_run_required: yes"));
    expect(await pinRefused(s)).toMatch(
      /cannot pin: MD-30 \(debugging\/md-30-debugging-executor\.md\) has a problem the gate will not run it with: .*dry_run_required/,
    );
  });

  it("dry_run_required: yes written after the pin: refused at init-run", async () => {
    const s = await makeScenario();
    await pin(s);
    editExecutor(s, declare("dry_run_required: yes"));
    const r = await attemptAdmission(s, "APPLY_SAFE");
    expect(r.admitted, r.output).toBe(false);
    expect(r.refusedAt).toBe("init-run");
  });

  it("dry_run_required: true behind a merge key (<<), which merge-aware YAML readers apply: refused by validate and the pin", async () => {
    const s = await makeScenario();
    editExecutor(s, declare("safety: &safety\n  dry_run_required: true\n<<: *safety"));
    const validate = await runCli(["validate", "--suite", s.suite]);
    expect(validate.code).toBe(1);
    expect(validate.output).toMatch(/merge key \("<<"\), which YAML 1\.1 tools apply and twinlock reads as a plain key/);
    expect(await pinRefused(s)).toMatch(/cannot pin/);
  });

  it.each([
    ["any key tagged !!merge", "safety: &safety\n  dry_run_required: false\n!!merge rules: *safety"],
    ["a key in the long tag form", "safety: &safety\n  dry_run_required: false\n!<tag:yaml.org,2002:merge> rules: *safety"],
    ["an explicit key tagged !!merge", "safety: &safety\n  dry_run_required: false\n? !!merge\n: *safety"],
  ])("dry_run_required merged in by %s (which this YAML library applies too): refused by validate and the pin", async (_, yaml) => {
    const s = await makeScenario();
    editExecutor(s, declare(yaml));
    const validate = await runCli(["validate", "--suite", s.suite]);
    expect(validate.code).toBe(1);
    expect(validate.output).toMatch(/holds a key tagged !!merge, which merges another mapping's keys in/);
    expect(await pinRefused(s)).toMatch(/cannot pin/);
  });
});

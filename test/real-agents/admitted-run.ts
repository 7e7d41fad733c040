import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { driveTo, EXECUTOR, makeGateRun } from "../../src/test-support/run-fixture.js";
import { EDIT_BEFORE } from "./scripted-action.js";

/**
 * A run of the demo pair with consent given and nothing admitted yet, its
 * folder the project an agent CLI runs in: `twinlock exec RUN MD-30` admits
 * it and binds the session. The admitted actions' targets are
 * `cart/cache_race_test.go` (A1, a new file) and `cart/cache.go` (A2, which
 * holds EDIT_BEFORE); `cart/other.go` (also EDIT_BEFORE) and `cart/extra.go`
 * (not there yet) are in the project and no target. The folder goes with the test file's `removeGateRuns()`.
 */
export interface AdmittedProject {
  project: string;
  runFile: string;
  executor: string;
  /** The gate home the run is recorded in, and the hook and exec read. */
  home: string;
  files: { newTarget: string; editTarget: string; outside: string; outsideNew: string };
}

export async function admittedProject(): Promise<AdmittedProject> {
  const g = makeGateRun();
  await driveTo(g, "dry_run_ready");
  const files = {
    newTarget: path.join(g.dir, "cart", "cache_race_test.go"),
    editTarget: path.join(g.dir, "cart", "cache.go"),
    outside: path.join(g.dir, "cart", "other.go"),
    outsideNew: path.join(g.dir, "cart", "extra.go"),
  };
  mkdirSync(path.join(g.dir, "cart"), { recursive: true });
  writeFileSync(files.editTarget, EDIT_BEFORE);
  writeFileSync(files.outside, EDIT_BEFORE);
  return { project: g.dir, runFile: g.runFile, executor: EXECUTOR, home: g.home, files };
}

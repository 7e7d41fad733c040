import { mkdirSync, realpathSync, writeFileSync } from "node:fs";
import path from "node:path";
import { driveTo, EXECUTOR, makeGateRun, PLANNER } from "../../src/test-support/run-fixture.js";
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

/**
 * A run of the demo pair in `investigating` (nothing frozen yet), its folder
 * the project an agent CLI runs in: `twinlock plan RUN MD-29 --handoff
 * handoff` binds the planner's session, its handoff folder `handoff/`. In
 * the handoff folder: `notes.md` (not there yet) and `draft.md` (holding
 * EDIT_BEFORE); outside it, the demo plan's action targets
 * `cart/cache_race_test.go` (not there yet) and `cart/cache.go` (EDIT_BEFORE).
 * The folder's real path is used throughout: the hook takes a write in the
 * handoff folder only by a path with no symbolic link on the way.
 */
export interface PlannerProject {
  project: string;
  runFile: string;
  planner: string;
  handoff: string;
  home: string;
  files: { handoffNew: string; handoffEdit: string; newTarget: string; editTarget: string };
}

export async function plannerProject(): Promise<PlannerProject> {
  const g = makeGateRun();
  await driveTo(g, "investigating");
  const dir = realpathSync(g.dir);
  const handoff = path.join(dir, "handoff");
  const files = {
    handoffNew: path.join(handoff, "notes.md"),
    handoffEdit: path.join(handoff, "draft.md"),
    newTarget: path.join(dir, "cart", "cache_race_test.go"),
    editTarget: path.join(dir, "cart", "cache.go"),
  };
  mkdirSync(path.join(dir, "cart"), { recursive: true });
  writeFileSync(files.editTarget, EDIT_BEFORE);
  writeFileSync(files.handoffEdit, EDIT_BEFORE);
  return { project: dir, runFile: path.join(dir, "run.json"), planner: PLANNER, handoff, home: g.home, files };
}

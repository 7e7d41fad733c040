import { readFileSync, writeFileSync } from "node:fs";
import type { RunFile } from "../run/run-schema.js";
import { driveTo, type GateRun, makeGateRun } from "./run-fixture.js";

/** What `fn` throws (failing the test when it returns). */
export function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error("expected a throw");
}

/**
 * Rewrite `runFile` with its events replaced by `count` (at least 1) empty
 * objects, written compactly as an agent would: the events last (a signed
 * run keeps its gate signature before them), so the list is the text's end.
 */
export function writeEmptyEvents(runFile: string, count: number): void {
  const { events: _events, ...rest } = JSON.parse(readFileSync(runFile, "utf8")) as RunFile;
  writeFileSync(runFile, `${JSON.stringify(rest).slice(0, -1)},"events":[{}${",{}".repeat(count - 1)}]}`);
}

/** A real run of the demo pair, frozen for review, whose run file then holds `count` empty events (writeEmptyEvents). */
export async function runWithEmptyEvents(count: number): Promise<GateRun> {
  const g = makeGateRun();
  await driveTo(g, "plan_review_pending");
  writeEmptyEvents(g.runFile, count);
  return g;
}

import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { removeDeadSessionTempDirs } from "../sandbox/session-temp-folder.js";
import { killStrangers, liveStranger, otherStart } from "../test-support/pid-stranger.js";
import { makeTempDir, removeTempDirs } from "../test-support/temp-suite.js";
import { removeDeadTempFiles } from "./atomic-write.js";
import { hasProcFs } from "./process-start.js";

afterAll(removeTempDirs);
afterEach(killStrangers);

describe.runIf(hasProcFs())("a leftover naming a live PID with another start time is reclaimed; the live one's is kept", () => {
  it("an atomic write's temporary file", () => {
    const dir = makeTempDir("twinlock-pid-reuse-");
    const s = liveStranger();
    const dead = path.join(dir, `.run.json.${s.pid}.${"a".repeat(12)}-${otherStart(s.tag)}.tmp`);
    const live = path.join(dir, `.run.json.${s.pid}.${"b".repeat(12)}-${s.tag}.tmp`);
    writeFileSync(dead, "");
    writeFileSync(live, "");
    removeDeadTempFiles(path.join(dir, "run.json"));
    expect([existsSync(dead), existsSync(live)]).toEqual([false, true]);
  });

  it("a session's temporary folder", () => {
    const tmp = makeTempDir("twinlock-pid-reuse-");
    const s = liveStranger();
    const dead = path.join(tmp, `twinlock-exec-${s.pid}-${otherStart(s.tag)}-Ab12Cd`);
    const live = path.join(tmp, `twinlock-exec-${s.pid}-${s.tag}-Ef34Gh`);
    mkdirSync(dead);
    mkdirSync(live);
    removeDeadSessionTempDirs(tmp);
    expect([existsSync(dead), existsSync(live)]).toEqual([false, true]);
  });
});

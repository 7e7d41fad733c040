import { createRequire } from "node:module";
import { afterAll, describe, expect, it } from "vitest";
import { writeDemoHandoff } from "../demo/demo-handoff.js";
import { dependencyUpgradeHandoff, writeMdHandoff } from "../test-support/mission-directives-handoff.js";
import { runCli } from "../test-support/run-cli.js";
import { makeRunTempDir, removeGateRuns } from "../test-support/run-fixture.js";
import { checkReadiness } from "./check-readiness.js";
import { MISSION_DIRECTIVES_FORMAT } from "./formats/mission-directives-format.js";

afterAll(removeGateRuns);

const ajvLoaded = () => Object.keys(createRequire(import.meta.url).cache).some((k) => /[\\/]node_modules[\\/]ajv[\\/]/.test(k));

describe("Ajv is loaded only when a JSON-Schema format is used", () => {
  it("is not loaded by --help or by readiness of a twinlock-format handoff; it is by a mission-directives one", async () => {
    expect(ajvLoaded()).toBe(false);
    await runCli(["--help"]);
    const twinlock = makeRunTempDir("twinlock-lazy-");
    writeDemoHandoff(twinlock);
    expect((await runCli(["readiness", twinlock, "--format", "twinlock"])).code).toBe(0);
    expect(ajvLoaded()).toBe(false);
    const md = makeRunTempDir("twinlock-lazy-");
    writeMdHandoff(md, dependencyUpgradeHandoff());
    expect(checkReadiness(md, MISSION_DIRECTIVES_FORMAT).ready).toBe(true);
    expect(ajvLoaded()).toBe(true);
  });
});

/**
 * The README's walk-throughs say what the commands do: the steps a new user
 * copies must not lead into a refusal the text never mentions.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/test-support/run-cli.js";
import { makeRunTempDir, removeGateRuns } from "../../src/test-support/run-fixture.js";

const readme = readFileSync(path.join(import.meta.dirname, "../../README.md"), "utf8");

afterAll(removeGateRuns);

/** The README's section under `heading` (a `## ` or `### ` line), up to the next heading of any level. */
function section(heading: string): string {
  const start = readme.indexOf(`\n${heading}\n`);
  expect(start, heading).toBeGreaterThan(-1);
  const end = readme.slice(start + heading.length + 2).search(/\n#{2,3} /);
  return end < 0 ? readme.slice(start) : readme.slice(start, start + heading.length + 2 + end);
}

describe("README.md", () => {
  it("installs twinlock in the SDK section from a clone (npm pack, or the folder), since the registry has no twinlock, and names npx twinlock", () => {
    const sdk = section("## In-process agents: the gate inside an agent SDK");
    expect(sdk).not.toMatch(/^npm install twinlock\b/m);
    expect(sdk).toMatch(/&& npm pack\)/);
    expect(sdk).toContain("npm install /path/to/twinlock/twinlock-*.tgz ai@6.0.325");
    expect(sdk).toContain("`npx twinlock` (or `node_modules/.bin/twinlock`)");
  });

  it('gives the SDK examples\' setup: the pin and run of "A run", the example handoff copied in, and what DRAFT_ONLY admits', () => {
    const sdk = section("## In-process agents: the gate inside an agent SDK");
    expect(sdk).toContain('cp -r "$(npm root)/twinlock/examples/handoff" agent-work/handoff');
    expect(sdk).toContain("twinlock init-run agent-work/run.json --suite my-suite\n--planner MD-29");
    expect(sdk).toMatch(/default mode is `DRAFT_ONLY`[\s\S]*may still write inside the admitted actions'\ntargets/);
    // The README's claim, as the CLI has it: init-run's default mode is DRAFT_ONLY.
    expect(readFileSync(path.join(import.meta.dirname, "../../src/gate/init-run.ts"), "utf8")).toContain('input.mode ?? "DRAFT_ONLY"');
  });

  it("says in the walk-through that an agent's work starts with exec instead of admit, since a consent admits once", () => {
    const run = section("### A run");
    const admitAt = run.indexOf("$ twinlock admit run.json MD-30 --checkout approved");
    expect(run.slice(0, admitAt)).toMatch(/when an agent does the work, run\n# `twinlock exec run\.json MD-30 -- claude` instead of admit/);
    expect(section("## Agents: `exec` and the pre-tool-use hook")).toContain("**Use `exec` instead of `admit`, not after it.**");
  });

  it("says which rights reviewer invite gives by default, as the CLI gives them, how to add verify, and where a verified close is signed", async () => {
    const r = await runCli(["reviewer", "invite", "vera", "--home", makeRunTempDir("twinlock-home-"), "--json"]);
    expect(r.code, r.output).toBe(0);
    const rights = (JSON.parse(r.stdout) as { rights: string[] }).rights.join(",");
    expect(rights).not.toContain("verify");
    const browser = section("## The gate server: review in the browser");
    expect(browser).toContain(
      `\`reviewer invite\` gives the rights ${rights} by default, not\nverify: \`--rights ${rights},verify\` adds it.`,
    );
    expect(browser).toMatch(/A reviewer with\nthe verify right closes an executing pair `verified` on its revision page with\nthe passkey/);
    expect(browser).toContain("or at the terminal with `--key FILE`");
  });
});

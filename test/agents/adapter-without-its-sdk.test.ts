/*
 * An adapter's subpath, and each example, in a project where its agent SDK
 * is not installed: one line naming the package, the version twinlock pins
 * and the `npm install` line, exit 2, no stack. twinlock is installed as its
 * package ships (src/test-support/project-without-sdks.ts).
 */
import { spawnSync } from "node:child_process";
import { rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ensureBuilt } from "../../src/test-support/ensure-built.js";
import { pinnedPeer, projectWithoutSdks } from "../../src/test-support/project-without-sdks.js";

const projects: string[] = [];
let bare = "";
beforeAll(async () => {
  await ensureBuilt();
  bare = projectWithoutSdks();
  projects.push(bare);
}, 180_000);
afterAll(() => {
  for (const p of projects) rmSync(p, { recursive: true, force: true });
});

/** The one line a subpath gives when `missing` (all of its SDK's packages here) are not installed. */
function refusal(subpath: string, missing: string[]): string {
  const many = missing.length > 1;
  return (
    `twinlock: ${subpath} needs ${missing.join(" and ")}, not installed here: twinlock supports ` +
    `${missing.map((n) => `${n} ${pinnedPeer(n)}`).join(" and ")} (its pinned optional peer ${many ? "dependencies" : "dependency"}); ` +
    `install ${many ? "them" : "it"} in your project: npm install ${missing.map((n) => `${n}@${pinnedPeer(n)}`).join(" ")}`
  );
}

function node(project: string, args: string[]) {
  return spawnSync(process.execPath, args, { cwd: project, encoding: "utf8", env: { PATH: process.env.PATH, HOME: process.env.HOME } });
}

const SUBPATHS: Array<[string, string[]]> = [
  ["ai-sdk", ["ai"]],
  ["openai-agents", ["@openai/agents"]],
  ["langgraph", ["@langchain/langgraph", "@langchain/core"]],
  ["claude-agent-sdk", ["@anthropic-ai/claude-agent-sdk"]],
];

describe("an adapter whose SDK is not installed", () => {
  it("is the pinned AI SDK version and the npm install line, in one line, when a script imports twinlock/ai-sdk", () => {
    writeFileSync(path.join(bare, "agent.mjs"), 'import { gateTools } from "twinlock/ai-sdk";\nconsole.log(typeof gateTools);\n');
    const r = node(bare, ["agent.mjs"]);
    expect(r.stderr).toBe(
      "twinlock: twinlock/ai-sdk needs ai, not installed here: twinlock supports ai 6.0.325 (its pinned optional peer dependency); install it in your project: npm install ai@6.0.325\n",
    );
    expect(r.stdout).toBe("");
    expect(r.status).toBe(2);
  });

  for (const [sdk, packages] of SUBPATHS) {
    it(`ends a script importing twinlock/${sdk} with one line naming ${packages.join(" and ")}, exit 2 and no stack`, () => {
      const script = `uses-${sdk}.mjs`;
      writeFileSync(path.join(bare, script), `import * as adapter from "twinlock/${sdk}";\nconsole.log(Object.keys(adapter).length);\n`);
      const r = node(bare, [script]);
      expect(r.stderr).toBe(`${refusal(`twinlock/${sdk}`, packages)}\n`);
      expect(r.status).toBe(2);
    });

    it(`ends examples/${sdk}/agent.mjs, run from the installed package, with the same one line`, () => {
      const r = node(bare, [path.join(bare, "node_modules", "twinlock", "examples", sdk, "agent.mjs")]);
      expect(r.stderr).toBe(`${refusal(`twinlock/${sdk}`, packages)}\n`);
      expect(r.stderr).not.toMatch(/\n\s+at |ERR_MODULE_NOT_FOUND|Node\.js v/);
      expect(r.status).toBe(2);
    });
  }

  it("names only the package still missing: @langchain/core when @langchain/langgraph is installed", () => {
    const half = projectWithoutSdks(["@langchain/langgraph"]);
    projects.push(half);
    const r = node(half, [path.join(half, "node_modules", "twinlock", "examples", "langgraph", "agent.mjs")]);
    expect(r.stderr).toBe(`${refusal("twinlock/langgraph", ["@langchain/core"])}\n`);
    expect(r.status).toBe(2);
  });

  it("is a MissingSdkError a caller can catch, and then the process goes on", () => {
    writeFileSync(
      path.join(bare, "catches.mjs"),
      'try { await import("twinlock/openai-agents"); } catch (e) { console.log(e.name, e.code, e.missing.map((p) => p.name).join()); }\nconsole.log("went on");\n',
    );
    const r = node(bare, ["catches.mjs"]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("MissingSdkError TWINLOCK_SDK_MISSING @openai/agents\nwent on\n");
    expect(r.status).toBe(0);
  });
});

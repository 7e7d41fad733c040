import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { BASE_FILES, baseSuite } from "../test-support/prompt-builder.js";
import { removeTempDirs, writeSuite } from "../test-support/temp-suite.js";
import { resolveExactTwin } from "../twin/resolve-exact-twin.js";
import { loadSuite } from "./load-suite.js";

afterAll(removeTempDirs);

/** What deciding about one prompt needs from a suite: its twin resolution and the files of the IDs involved. */
function decisionOf(root: string, id: string, partial: boolean) {
  const suite = loadSuite(root, partial ? { promptIds: [id] } : {});
  const resolved = resolveExactTwin(suite, id);
  const ids = resolved.ok ? [resolved.twin.planner.id, resolved.twin.executor.id] : [id];
  return {
    resolved: resolved.ok ? { planner: resolved.twin.planner.file, executor: resolved.twin.executor.file } : resolved.reasons,
    files: ids.map((x) => (suite.duplicates.get(x) ?? [suite.byId.get(x)]).map((p) => p?.file ?? null)),
  };
}

describe("loading a suite for some prompts only", () => {
  it("parses only the files that can declare the prompt or its twin, and resolves the twin as a full load does", () => {
    const root = writeSuite(baseSuite());
    const suite = loadSuite(root, { promptIds: ["MD-10"] });
    expect(suite.partial).toBe(true);
    expect(suite.prompts.map((p) => p.id).sort()).toEqual(["MD-10", "MD-11"]);
    expect(decisionOf(root, "MD-10", true)).toEqual(decisionOf(root, "MD-10", false));
  });

  it("follows the twin from an executor to its planner", () => {
    const root = writeSuite(baseSuite());
    const suite = loadSuite(root, { promptIds: ["MD-11"] });
    expect(suite.byId.get("MD-10")?.file).toBe(BASE_FILES["MD-10"]);
  });

  it("finds a second file declaring the ID even when YAML escapes spell it, so a duplicate is never missed", () => {
    const files = { ...baseSuite(), "extra/sneaky.md": '---\nprompt_id: "MD\\x2D11"\nprompt_role: executive\n---\nbody\n' };
    const root = writeSuite(files);
    const partial = decisionOf(root, "MD-10", true);
    expect(partial).toEqual(decisionOf(root, "MD-10", false));
    expect(partial.resolved).toEqual(expect.arrayContaining([expect.stringContaining("MD-11 is declared by 2 files")]));
  });

  it("is not disturbed by a broken file that cannot declare the prompt", () => {
    const root = writeSuite({ ...baseSuite(), "zz/broken.md": "---\nprompt_id: [unclosed\n---\n" });
    expect(decisionOf(root, "MD-12", true)).toEqual(decisionOf(root, "MD-12", false));
    expect(loadSuite(root, { promptIds: ["MD-12"] }).diagnostics).toEqual([]);
  });

  it("decides exactly as a full load for any prompt asked about, in suites with re-pointed, duplicated and escaped IDs", () => {
    const ids = ["MD-10", "MD-11", "MD-12", "MD-13", "MD-20", "MD-99"];
    const variant = fc.record({
      target: fc.constantFrom(...ids),
      repoint: fc.option(fc.tuple(fc.constantFrom("MD-10", "MD-12"), fc.constantFrom(...ids)), { nil: undefined }),
      duplicate: fc.option(fc.tuple(fc.constantFrom(...ids), fc.boolean()), { nil: undefined }),
    });
    fc.assert(
      fc.property(variant, ({ target, repoint, duplicate }) => {
        const files: Record<string, string> = { ...baseSuite() };
        if (repoint) {
          const [planner, to] = repoint;
          const file = BASE_FILES[planner as keyof typeof BASE_FILES];
          files[file] = (files[file] as string).replace(/^paired_prompt_id: .*$/m, `paired_prompt_id: ${to}`);
        }
        if (duplicate) {
          const [id, escaped] = duplicate;
          const spelled = escaped ? `"${id.replace("-", "\\x2D")}"` : id;
          files["dup/copy.md"] = `---\nprompt_id: ${spelled}\nprompt_role: executive\npaired_prompt_id: MD-10\n---\nbody\n`;
        }
        const root = writeSuite(files);
        expect(decisionOf(root, target, true)).toEqual(decisionOf(root, target, false));
      }),
      { numRuns: 60 },
    );
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SuiteConfig } from "../suite/suite-config.js";
import { suiteFromFiles } from "../test-support/memory-suite.js";
import {
  BASE_FILES,
  baseSuite,
  DEFAULT_VERIFICATION_ITEMS,
  executorText,
  gateText,
  lineContaining,
  lineOf,
  plannerText,
  unpairedText,
} from "../test-support/prompt-builder.js";
import { checkBodies } from "./check-bodies.js";

const PLANNER = BASE_FILES["MD-10"];
const EXECUTOR = BASE_FILES["MD-11"];
const GATE = "plan_review_and_execution_gate";
const bodyLineOf = (text: string) => text.split("\n").indexOf("---", 1) + 2;

const audit = (replace: Record<string, string>, config: SuiteConfig = {}) =>
  checkBodies(suiteFromFiles({ ...baseSuite(), ...replace }, config));
const withGate = (gate: string) => plannerText("MD-10", "MD-11", { body: { blocks: { [GATE]: gate } } });

describe("checkBodies on valid bodies", () => {
  it("reports nothing for the base suite", () => {
    expect(audit({})).toEqual([]);
  });
});

describe("required blocks", () => {
  it.each(["runtime_markers", "authorization_boundary", "tool_policy"])(
    "requires <%s> of every prompt, reported at the body's first line",
    (tag) => {
      const text = unpairedText("MD-20", "executive", { body: { omit: [tag] } });
      expect(audit({ [BASE_FILES["MD-20"]]: text })).toEqual([
        expect.objectContaining({
          code: "BODY_BLOCK_MISSING",
          file: BASE_FILES["MD-20"],
          line: bodyLineOf(text),
          promptId: "MD-20",
          field: tag,
        }),
      ]);
    },
  );

  it.each([GATE, "handoff_contract"])("requires <%s> of a paired planner", (tag) => {
    const text = plannerText("MD-10", "MD-11", { body: { omit: [tag] } });
    const ds = audit({ [PLANNER]: text });
    expect(ds).toContainEqual(expect.objectContaining({ code: "BODY_BLOCK_MISSING", file: PLANNER, line: bodyLineOf(text), field: tag }));
    expect(ds.find((d) => d.field === tag)?.message).toContain(`<${tag}>`);
  });

  it.each(["reviewed_handoff_authority", "decision_rules", "verification_reference"])("requires <%s> of a paired executor", (tag) => {
    const text = executorText("MD-11", "MD-10", { body: { omit: [tag] } });
    expect(audit({ [EXECUTOR]: text })).toEqual([
      expect.objectContaining({ code: "BODY_BLOCK_MISSING", file: EXECUTOR, line: bodyLineOf(text), promptId: "MD-11", field: tag }),
    ]);
  });

  it("does not require planner or executor blocks of unpaired prompts", () => {
    expect(audit({ [BASE_FILES["MD-20"]]: unpairedText("MD-20", "executive") })).toEqual([]);
  });

  it("reports a block that is opened and never closed at its opening tag", () => {
    const text = unpairedText("MD-20", "executive").replace("</authorization_boundary>", "");
    expect(audit({ [BASE_FILES["MD-20"]]: text })).toContainEqual(
      expect.objectContaining({
        code: "BODY_BLOCK_UNCLOSED",
        line: lineOf(text, "<authorization_boundary>"),
        col: 1,
        field: "authorization_boundary",
      }),
    );
  });

  it("finds blocks in a file with CRLF line endings, at the right lines", () => {
    const text = unpairedText("MD-20", "executive", { body: { omit: ["tool_policy"] } });
    const crlf = text.replace(/\n/g, "\r\n");
    expect(audit({ [BASE_FILES["MD-20"]]: crlf })).toEqual([
      expect.objectContaining({ code: "BODY_BLOCK_MISSING", line: bodyLineOf(text), field: "tool_policy" }),
    ]);
  });
});

describe("runtime markers", () => {
  it.each(["@EVIDENCE:{id}", "?UNKNOWN:{id}", "#FINDING:{id}", "+ACTION:{id}", "=VERIFY:{id}", "!STOP:{reason}"])(
    "reports <runtime_markers> that does not name %s, at the block's line",
    (missing) => {
      const markers = ["@EVIDENCE:{id}", "?UNKNOWN:{id}", "#FINDING:{id}", "+ACTION:{id}", "=VERIFY:{id}", "!STOP:{reason}"].filter(
        (m) => m !== missing,
      );
      const text = unpairedText("MD-20", "executive", { body: { markers } });
      const ds = audit({ [BASE_FILES["MD-20"]]: text });
      expect(ds).toEqual([
        expect.objectContaining({ code: "BODY_MARKER_MISSING", line: lineOf(text, "<runtime_markers>"), field: "runtime_markers" }),
      ]);
      expect(ds[0]?.message).toContain(missing);
    },
  );

  it("does not accept a marker that appears only outside the block", () => {
    const markers = ["@EVIDENCE:{id}", "?UNKNOWN:{id}", "#FINDING:{id}", "+ACTION:{id}", "=VERIFY:{id}"];
    const text = unpairedText("MD-20", "executive", { body: { markers, extra: "Stop with `!STOP:{reason}` when blocked." } });
    expect(audit({ [BASE_FILES["MD-20"]]: text }).map((d) => d.code)).toEqual(["BODY_MARKER_MISSING"]);
  });
});

describe("the planner's review gate", () => {
  it.each(["user review", "requested changes", "re-freeze", "execution consent", "exact execution twin"])(
    "reports a gate lacking the phrase %j at the gate's line",
    (phrase) => {
      const gate = `${gateText("MD-11").replace(new RegExp(phrase, "i"), "(removed)")}`;
      expect(gate).not.toContain(phrase);
      const text = withGate(gate);
      const ds = audit({ [PLANNER]: text });
      expect(ds).toEqual([
        expect.objectContaining({ code: "BODY_PHRASE_MISSING", file: PLANNER, line: lineOf(text, `<${GATE}>`), field: GATE }),
      ]);
      expect(ds[0]?.message).toContain(`"${phrase}"`);
    },
  );

  it("matches the phrases without regard to case or white space (`User   Review`, line breaks, capitals)", () => {
    const gate = [
      "Present the plan for User   Review.",
      "Invite REQUESTED\nCHANGES and record them as feedback.",
      "Re-Freeze under a new hash after every revision.",
      "Then ask for execution\tconsent naming the Exact  Execution\n  Twin MD-11.",
    ].join("\n");
    expect(audit({ [PLANNER]: withGate(gate) })).toEqual([]);
  });

  it("does not accept `refreeze` for `re-freeze`", () => {
    const text = withGate(gateText("MD-11").replace("re-freeze", "refreeze"));
    expect(audit({ [PLANNER]: text }).map((d) => d.code)).toEqual(["BODY_PHRASE_MISSING"]);
  });

  it("reports a gate that does not name the twin's ID", () => {
    const text = withGate(gateText("the paired executor"));
    const ds = audit({ [PLANNER]: text });
    expect(ds).toEqual([
      expect.objectContaining({ code: "BODY_TWIN_NOT_NAMED", line: lineOf(text, `<${GATE}>`), field: GATE, promptId: "MD-10" }),
    ]);
    expect(ds[0]?.message).toContain("MD-11");
  });

  it("does not take MD-110 or MD-11a for a mention of MD-11", () => {
    for (const near of ["MD-110", "MD-11a", "XMD-11", "MD-11-2"]) {
      const ds = audit({ [PLANNER]: withGate(gateText(near)) });
      expect(
        ds.map((d) => d.code),
        near,
      ).toContain("BODY_TWIN_NOT_NAMED");
    }
  });

  it("accepts the twin's ID followed by punctuation", () => {
    expect(audit({ [PLANNER]: withGate(`${gateText("MD-11")}\nOnly MD-11's run counts (MD-11).`) })).toEqual([]);
  });

  it("warns when the gate names another executive prompt", () => {
    const text = withGate(`${gateText("MD-11")}\nWhen MD-11 is busy, MD-13 may run it.`);
    const ds = audit({ [PLANNER]: text });
    expect(ds).toEqual([
      expect.objectContaining({ code: "BODY_ALTERNATE_EXECUTOR", severity: "warning", line: lineOf(text, `<${GATE}>`) }),
    ]);
    expect(ds[0]?.message).toContain("MD-13");
  });

  it("does not warn when the gate names a non-executive prompt", () => {
    expect(audit({ [PLANNER]: withGate(`${gateText("MD-11")}\nSee MD-01 for markers and MD-12 for the sibling plan.`) })).toEqual([]);
  });
});

describe("the executor's authority and verification", () => {
  it("reports <reviewed_handoff_authority> that does not name the planner", () => {
    const text = executorText("MD-11", "MD-10", { body: { blocks: { reviewed_handoff_authority: "Act only on a reviewed handoff." } } });
    const ds = audit({ [EXECUTOR]: text });
    expect(ds).toEqual([
      expect.objectContaining({
        code: "BODY_TWIN_NOT_NAMED",
        line: lineOf(text, "<reviewed_handoff_authority>"),
        field: "reviewed_handoff_authority",
      }),
    ]);
    expect(ds[0]?.message).toContain("MD-10");
  });

  it("reports an executor that copies a bullet of its planner's <verification_design>, at the copied line", () => {
    const copied = `* ${DEFAULT_VERIFICATION_ITEMS[1]}`;
    const text = executorText("MD-11", "MD-10", { body: { blocks: { verification_reference: `Checks:\n${copied}` } } });
    const ds = audit({ [EXECUTOR]: text });
    expect(ds).toEqual([
      expect.objectContaining({ code: "BODY_COPIED_VERIFICATION", file: EXECUTOR, line: lineContaining(text, copied), promptId: "MD-11" }),
    ]);
    expect(ds[0]?.message).toContain("MD-10");
  });

  it("catches a copied bullet despite changed case, numbering, spacing and a dropped full stop", () => {
    const item = DEFAULT_VERIFICATION_ITEMS[0].toUpperCase().replace(/ /g, "  ").replace(/\.$/, "");
    const text = executorText("MD-11", "MD-10", { body: { extra: `1. ${item}` } });
    expect(audit({ [EXECUTOR]: text }).map((d) => d.code)).toEqual(["BODY_COPIED_VERIFICATION"]);
  });

  it("catches a copied bullet whatever its case, white space, list marker and closing punctuation", () => {
    const words = DEFAULT_VERIFICATION_ITEMS[1].replace(/\.$/, "").split(" ");
    const arbitrary = fc.record({
      cases: fc.array(fc.boolean(), { minLength: words.length, maxLength: words.length }),
      gaps: fc.array(fc.constantFrom(" ", "  ", "\t", "\u00a0", " \u3000 "), { minLength: words.length - 1, maxLength: words.length - 1 }),
      marker: fc.constantFrom("", "- ", "*\t", "+  ", "1. ", "12) "),
      indent: fc.constantFrom("", "  ", "\t"),
      end: fc.constantFrom("", ".", ";", ":,", "  "),
    });
    fc.assert(
      fc.property(arbitrary, ({ cases, gaps, marker, indent, end }) => {
        const line = indent + marker + words.map((w, i) => (cases[i] ? w.toUpperCase() : w) + (gaps[i] ?? "")).join("") + end;
        const text = executorText("MD-11", "MD-10", { body: { extra: line } });
        expect(audit({ [EXECUTOR]: text }).map((d) => d.code)).toEqual(["BODY_COPIED_VERIFICATION"]);
      }),
      { numRuns: 300 },
    );
  });

  it("does not count short design bullets (under the minimum length) as copied", () => {
    const planner = plannerText("MD-10", "MD-11", { body: { blocks: { verification_design: "- Tests pass.\n- CI green." } } });
    const executor = executorText("MD-11", "MD-10", { body: { extra: "- Tests pass.\n- CI green." } });
    expect(audit({ [PLANNER]: planner, [EXECUTOR]: executor })).toEqual([]);
  });

  it("only compares an executor with its own planner's design", () => {
    const text = executorText("MD-13", "MD-12", { body: { extra: `- ${DEFAULT_VERIFICATION_ITEMS[0]}` } });
    // MD-12 has the same default design, so this IS a copy; an unpaired executive copying is not judged.
    expect(audit({ [BASE_FILES["MD-13"]]: text }).map((d) => d.code)).toEqual(["BODY_COPIED_VERIFICATION"]);
    const unpaired = unpairedText("MD-20", "executive", { body: { extra: `- ${DEFAULT_VERIFICATION_ITEMS[0]}` } });
    expect(audit({ [BASE_FILES["MD-20"]]: unpaired })).toEqual([]);
  });
});

describe("body rules tuned in twinlock.yaml", () => {
  it("uses a suite's own gate phrases instead of the defaults", () => {
    const text = withGate("Ask for sign-off naming MD-11.");
    const ofMd10 = (config: SuiteConfig = {}) => audit({ [PLANNER]: text }, config).filter((d) => d.promptId === "MD-10");
    expect(ofMd10().map((d) => d.code)).toEqual(["BODY_PHRASE_MISSING"]);
    expect(ofMd10({ body_rules: { gate_phrases: ["sign-off"] } })).toEqual([]);
  });

  it("uses a suite's own marker list instead of the six defaults", () => {
    const text = unpairedText("MD-20", "executive", { body: { markers: ["@EVIDENCE:{id}"] } });
    expect(audit({ [BASE_FILES["MD-20"]]: text }).map((d) => d.code)).toEqual(["BODY_MARKER_MISSING"]);
    expect(
      audit({ [BASE_FILES["MD-20"]]: text }, { body_rules: { markers: ["@EVIDENCE:{id}"] } }).filter((d) => d.promptId === "MD-20"),
    ).toEqual([]);
  });

  it("requires extra blocks a suite lists for all prompts", () => {
    const ds = audit({}, { body_rules: { all_blocks: ["runtime_markers", "authorization_boundary", "tool_policy", "rollback"] } });
    expect(new Set(ds.map((d) => `${d.code}:${d.field}`))).toEqual(new Set(["BODY_BLOCK_MISSING:rollback"]));
    expect(ds).toHaveLength(6);
  });
});

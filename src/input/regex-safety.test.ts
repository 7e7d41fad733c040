import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { JSON_POINTER_PATTERN, LIST_POINTER_PATTERN } from "../suite/suite-config.js";

const src = path.resolve(import.meta.dirname, "..");

/** Every regular expression written in twinlock's own code (not its tests): literals, and `new RegExp` of a literal text. */
function regexesInSource(): Array<{ file: string; source: string }> {
  const out: Array<{ file: string; source: string }> = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const file = path.join(dir, entry.name);
      // The tests' own helpers read only pages the tests made, never an agent's input.
      if (entry.isDirectory()) {
        if (entry.name !== "test-support") walk(file);
      } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts") && !entry.name.endsWith(".d.ts")) {
        const text = readFileSync(file, "utf8");
        const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false);
        const visit = (node: ts.Node) => {
          if (node.kind === ts.SyntaxKind.RegularExpressionLiteral) {
            const literal = (node as ts.RegularExpressionLiteral).text;
            out.push({ file: path.relative(src, file), source: literal.slice(1, literal.lastIndexOf("/")) });
          } else if (ts.isNewExpression(node) && node.expression.getText(sf) === "RegExp") {
            const first = node.arguments?.[0];
            if (first && (ts.isStringLiteral(first) || ts.isNoSubstitutionTemplateLiteral(first)))
              out.push({ file: path.relative(src, file), source: first.text });
            else if (first && ts.isTemplateExpression(first))
              // The parts around each substitution (an escaped marker): the shape that repeats is in the text.
              out.push({
                file: path.relative(src, file),
                source: [first.head.text, ...first.templateSpans.map((s) => `x${s.literal.text}`)].join(""),
              });
          }
          ts.forEachChild(node, visit);
        };
        visit(sf);
      }
    }
  };
  walk(src);
  return out;
}

/**
 * Why a pattern may backtrack super-linearly, or undefined: a group holding a
 * `*`, `+` or `{n,}` that is itself repeated without bound (`(a+)+`,
 * `(\/(x)*)*`), the shape behind exponential backtracking; or a repeated
 * group of alternatives (`(a|ab)*`), which is only safe when no two
 * alternatives can start alike (those are listed, each with its reason).
 */
function backtrackingRisk(source: string): string | undefined {
  interface Group {
    unbounded: boolean;
    alternation: boolean;
  }
  const stack: Group[] = [{ unbounded: false, alternation: false }];
  let last: Group | undefined; // the group just closed, when the next token may quantify it
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i] as string;
    if (c === "\\") {
      i++;
      last = undefined;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") {
      inClass = true;
      last = undefined;
      continue;
    }
    if (c === "(") {
      stack.push({ unbounded: false, alternation: false });
      last = undefined;
      continue;
    }
    if (c === ")") {
      const closed = stack.pop() as Group;
      const parent = stack.at(-1) as Group;
      parent.unbounded ||= closed.unbounded;
      last = closed;
      continue;
    }
    if (c === "|") {
      (stack.at(-1) as Group).alternation = true;
      last = undefined;
      continue;
    }
    const brace = c === "{" ? /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i)) : null;
    if (c === "*" || c === "+" || c === "?" || brace) {
      const unbounded = c === "*" || c === "+" || (brace !== null && brace[2] !== undefined && brace[3] === "");
      if (unbounded) {
        if (last?.unbounded) return `a repeated group holds a repetition: ${source}`;
        if (last?.alternation) return `a repeated group of alternatives: ${source}`;
        (stack.at(-1) as Group).unbounded = true;
      }
      if (brace) i += brace[0].length - 1;
      if (source[i + 1] === "?") i++;
      last = undefined;
      continue;
    }
    last = undefined;
  }
  return undefined;
}

/** Repeated groups of alternatives read and found safe: no two alternatives can match the same first character. */
const REVIEWED = new Map<string, string>([
  ["^\\/(?:[^~]|~[01])*$", "[^~] and ~[01] start with different characters"],
  ["^(?:\\/(?:[^~]|~[01])*)?$", "[^~] and ~[01] start with different characters"],
]);

/** The JSON Pointer grammar of RFC 6901 read as a loop: `/`, then text whose every `~` is followed by 0 or 1. */
function isJsonPointer(s: string, allowWhole: boolean): boolean {
  if (s === "") return allowWhole;
  if (s[0] !== "/") return false;
  for (let i = 1; i < s.length; i++) if (s[i] === "~" && s[i + 1] !== "0" && s[i + 1] !== "1") return false;
  return true;
}

describe("regular expressions that see agent input", () => {
  it("have no repeated group holding a repetition, nor an unreviewed repeated group of alternatives, anywhere in twinlock's code", () => {
    const found = regexesInSource();
    expect(found.length).toBeGreaterThan(50);
    const risky = found
      .map((r) => ({ ...r, risk: backtrackingRisk(r.source) }))
      .filter((r) => r.risk !== undefined && !REVIEWED.has(r.source))
      .map((r) => `${r.file}: ${r.risk}`);
    expect(risky).toEqual([]);
  });

  it("tells the shapes apart: the old JSON Pointer pattern and (a+)+ are risks, the new ones and (ab)? are not", () => {
    expect(backtrackingRisk("^(\\/([^~]|~[01])*)*$")).toBeDefined();
    expect(backtrackingRisk("^(a+)+$")).toBeDefined();
    expect(backtrackingRisk("^(a|ab)*$")).toBeDefined();
    expect(backtrackingRisk("^(?:ab)?c+$")).toBeUndefined();
    expect(backtrackingRisk("^[(a+)+]$")).toBeUndefined();
  });

  it("match a JSON Pointer exactly as RFC 6901's grammar does, on strings made of its awkward characters (40 slashes and a ~ among them)", () => {
    const awkward = fc.oneof(
      fc.string({ unit: fc.constantFrom("/", "~", "0", "1", "a"), maxLength: 200 }),
      fc.integer({ min: 1, max: 5000 }).map((n) => `${"/".repeat(n)}~`),
      fc.integer({ min: 1, max: 5000 }).map((n) => `${"/a~0".repeat(n)}~2`),
    );
    fc.assert(
      fc.property(awkward, (s) => {
        expect(JSON_POINTER_PATTERN.test(s)).toBe(isJsonPointer(s, false));
        expect(LIST_POINTER_PATTERN.test(s)).toBe(isJsonPointer(s, true));
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
    );
    expect(JSON_POINTER_PATTERN.test(`${"/".repeat(40)}~`)).toBe(false);
    expect(LIST_POINTER_PATTERN.test("")).toBe(true);
    expect(JSON_POINTER_PATTERN.test("/risk/level~1x")).toBe(true);
  });
});

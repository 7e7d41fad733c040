import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findDeceptiveChar } from "../input/clean-text.js";
import { parseWithYaml } from "./parse-prompt-file.js";
import { parseSimpleFrontmatter } from "./parse-simple-frontmatter.js";

/**
 * Random frontmatter in every shape the fast parser reads (and many it must
 * decline), rendered from a seed, then mutated character by character. The
 * property: whenever the fast parser accepts a document, the `yaml` library
 * accepts it too and gives the same values and the same positions.
 */

function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T,
    chance: (p: number) => next() < p,
  };
}
type Rng = ReturnType<typeof rng>;

const KEYS = [
  "prompt_id",
  "title",
  "requires",
  "outputs",
  "media",
  "path",
  "x-key",
  "_k",
  "a.b",
  "k",
  "description",
  "notes",
  "v2",
  "owner",
  "files",
  "trust",
  "risk",
  "tags",
];
const ODD_KEYS = ["true", "null", "__proto__", "Null", "k", "bad key", "a:b", "9lives", '"q"', "'s'"];
const PLAIN = [
  "MD-29",
  "investigative",
  "true",
  "False",
  "null",
  "~",
  "yes",
  "007",
  "12",
  "-3",
  "+5",
  "1.5",
  "1.",
  ".5",
  "1e3",
  "-1E-2",
  ".inf",
  "-.Inf",
  ".NaN",
  "0x1F",
  "0o7",
  "0o8",
  "2.3.0",
  "2025-01-01",
  "hello world",
  "a#b",
  "C:\\path",
  "ünïcode ✓",
  "a,b",
  "[x]",
  "x]",
  "-x",
  "--",
  "http://x.y/z",
  "a:b",
  "it's",
  'say "hi"',
  "9007199254740993",
  "1_000",
  "0.0",
];
const WILD = [
  "a: b",
  "a #b",
  "x:",
  "@x",
  "!tag",
  "&a",
  "*a",
  "%x",
  "`x`",
  "|",
  ">",
  "- x",
  "-",
  "? x",
  "{a: 1}",
  "'",
  '"',
  "\\",
  " lead",
  "trail ",
  "#c",
];
const INDENTS = [2, 4];

function scalar(r: Rng): string {
  const word = r.chance(0.95) ? r.pick(PLAIN) : r.pick(WILD);
  const style = r.int(10);
  if (style < 6) return word;
  if (style < 8) return `'${word.replace(/'/g, r.chance(0.9) ? "''" : "'")}'`;
  return `"${word.replace(/\\/g, r.chance(0.9) ? "\\\\" : "\\").replace(/"/g, '\\"')}${r.pick(["", "\\n", "\\t", "\\u00e9", "\\x41", "\\/", "\\ ", "\\q", "\\U0001F600"])}"`;
}

/** Lines of a value after `key:` or `-` at `indent` (the parent's indent), first line's tail returned separately. */
function value(r: Rng, indent: number, depth: number, anchors: string[], inSeq: boolean): { tail: string; lines: string[] } {
  const sub = indent + r.pick(INDENTS);
  const kind = r.int(depth > 2 ? 8 : 14);
  const anchor = r.chance(0.12) ? `&a${r.int(4)}` : "";
  const lead = anchor ? ` ${anchor}` : "";
  const define = <T>(v: T): T => {
    if (anchor) anchors.push(anchor.slice(1));
    return v;
  };
  switch (kind) {
    case 0:
    case 1:
    case 2:
      return define({ tail: `${lead} ${scalar(r)}${r.chance(0.1) ? " # note" : ""}`, lines: [] });
    case 3: {
      const n = 1 + r.int(3);
      const cont: string[] = [];
      for (let k = 0; k < n; k++) {
        if (r.chance(0.2)) cont.push(r.chance(0.5) ? "" : " ".repeat(sub));
        cont.push(
          `${" ".repeat(r.chance(0.9) ? sub : indent)}${r.pick(PLAIN)} ${r.pick(["word", "more text", "- dash", "x: y", "#h", "end"])}`,
        );
      }
      return define({
        tail: `${lead} ${r.pick(["First", "plain words", "'quoted", '"dq']).replace(/^(['"])(.*)$/, "$1$2")}`,
        lines: r.chance(0.3) ? [...cont.slice(0, -1), `${cont[cont.length - 1]}${r.pick(["'", '"', ""])}`] : cont,
      });
    }
    case 4: {
      const header = r.pick(["|", "|-", "|+", ">", ">-", ">+", "|2", "| # c"]);
      const lines: string[] = [];
      for (let k = 0, n = 1 + r.int(4); k < n; k++)
        lines.push(
          r.chance(0.2)
            ? r.chance(0.5)
              ? ""
              : " ".repeat(sub + r.int(3))
            : `${" ".repeat(sub + (r.chance(0.1) ? 2 : 0))}${r.pick(PLAIN)} line`,
        );
      return define({ tail: `${lead} ${header}`, lines });
    }
    case 5: {
      const items = Array.from({ length: r.int(4) }, () => (r.chance(0.8) ? r.pick(PLAIN) : scalar(r)));
      return define({ tail: `${lead} [${items.join(r.pick([", ", ",", " , "]))}${r.chance(0.05) ? "," : ""}]`, lines: [] });
    }
    case 6:
      if (anchors.length > 0 && !anchor) return { tail: ` *${r.pick(anchors)}${r.chance(0.1) ? " x" : ""}`, lines: [] };
      return define({ tail: `${lead}`, lines: [] }); // an empty value: null
    case 7:
      return define({ tail: `${lead} ${r.pick(["{}", "[]", "{ }", "{a: 1}"])}`, lines: [] });
    case 8:
    case 9:
    case 10:
      return define({ tail: `${lead}${r.chance(0.1) ? " # c" : ""}`, lines: mapping(r, sub, depth + 1, anchors) });
    default: {
      const seqIndent = !inSeq && r.chance(0.5) ? indent : sub;
      return define({ tail: `${lead}`, lines: sequence(r, seqIndent, depth + 1, anchors) });
    }
  }
}

function mapping(r: Rng, indent: number, depth: number, anchors: string[]): string[] {
  const out: string[] = [];
  for (let k = 0, n = 1 + r.int(depth === 0 ? 8 : 4); k < n; k++) {
    if (r.chance(0.08)) out.push(r.chance(0.5) ? "" : `${" ".repeat(r.int(indent + 2))}# comment`);
    const key = r.chance(0.03) ? r.pick(ODD_KEYS) : r.pick(KEYS);
    const v = value(r, indent, depth, anchors, false);
    out.push(`${" ".repeat(indent)}${key}:${v.tail}`, ...v.lines);
  }
  return out;
}

function sequence(r: Rng, indent: number, depth: number, anchors: string[]): string[] {
  const out: string[] = [];
  for (let k = 0, n = 1 + r.int(4); k < n; k++) {
    const form = r.int(depth > 2 ? 2 : 4);
    const gap = " ".repeat(1 + (r.chance(0.1) ? 2 : 0));
    if (form === 3) {
      // `- key: value` with more keys below, aligned with the first
      const inner = mapping(r, indent + 1 + gap.length, depth + 1, anchors);
      out.push(`${" ".repeat(indent)}-${gap}${(inner[0] as string).trimStart()}`, ...inner.slice(1));
    } else if (form === 2) {
      const inner = sequence(r, indent + 2, depth + 1, anchors);
      out.push(`${" ".repeat(indent)}- ${(inner[0] as string).trimStart()}`, ...inner.slice(1));
    } else {
      const v = value(r, indent, depth, anchors, true);
      out.push(`${" ".repeat(indent)}-${v.tail}`, ...v.lines);
    }
  }
  return out;
}

function mutate(r: Rng, lines: string[]): string[] {
  const text = lines.join("\n").split("");
  for (let k = 0, n = 1 + r.int(3); k < n; k++) {
    const at = r.int(text.length + 1);
    const op = r.int(3);
    const ch = r.pick([" ", " ", ":", "-", "#", "&", "*", "'", '"', "|", ">", "[", "]", "{", "\n", "x", "\\", ",", "!", "?", "\t"]);
    if (op === 0) text.splice(at, 0, ch);
    else if (op === 1) text.splice(at, 1);
    else text.splice(at, 1, ch);
  }
  return text.join("").split("\n");
}

/** Characters refused in frontmatter or close to them, the tab and CR that findDeceptiveChar allows among them. */
const ODD_CHARS = [
  "\t",
  "\r",
  "\u0000",
  "\u0007",
  "\u000b",
  "\u001f",
  "\u007f",
  "\u0085",
  "\u00a0",
  "\u2028",
  "\u2029",
  "\ufeff",
  "\u200b",
  "\u202e",
  "\ufe0f",
  "é",
  "✓",
];

function sprinkle(r: Rng, lines: string[]): string[] {
  const out = [...lines];
  for (let k = 0, n = r.int(3); k < n; k++) {
    const at = r.int(out.length);
    const line = out[at] as string;
    // A CR ending a line other than the last is one findDeceptiveChar allows (it comes before a line feed).
    const col = r.chance(0.2) ? line.length : r.int(line.length + 1);
    out[at] = line.slice(0, col) + (col === line.length && r.chance(0.5) ? "\r" : r.pick(ODD_CHARS)) + line.slice(col);
  }
  return out;
}

function compare(lines: string[]): boolean {
  const fast = parseSimpleFrontmatter(lines.join("\n"), 2);
  if (fast === undefined) return false;
  const full = parseWithYaml(lines.join("\n"), "f.md");
  if ("diagnostics" in full)
    throw new Error(`the fast parser accepted what the yaml library refuses:\n${lines.join("\n")}\n→ ${full.diagnostics[0]?.message}`);
  expect(fast.data, lines.join("\n")).toEqual(full.data);
  expect(Object.fromEntries(fast.positions), lines.join("\n")).toEqual(Object.fromEntries(full.positions));
  return true;
}

/**
 * Frontmatter made mostly of the lines the parser reads with one match and which step onto the next line
 * (`key:`, `key: plain`, `- plain`): each followed by a line of any kind — deeper, same or shallower, blank, of
 * spaces only, a comment at any indent, or none — with odd spacing now and then, so every way of finding where a
 * scalar ends and the next entry starts is tried.
 */
function lineRun(r: Rng, indent: number, depth: number): string[] {
  const out: string[] = [];
  const pad = (n: number) => " ".repeat(n);
  const gap = () => (r.chance(0.9) ? " " : r.pick(["  ", ""]));
  const tail = () => (r.chance(0.9) ? "" : r.pick([" ", " # c", ":", " x: y"]));
  for (let k = 0, n = 1 + r.int(5); k < n; k++) {
    const form = r.int(depth > 2 ? 2 : 4);
    if (form === 0) out.push(`${pad(indent)}${r.pick(KEYS)}:${gap()}${r.pick(PLAIN)}${tail()}`);
    else if (form === 1) out.push(`${pad(indent)}${r.pick(KEYS)}:${r.chance(0.9) ? "" : r.pick([" ", " # c"])}`);
    else if (form === 2) {
      out.push(`${pad(indent)}${r.pick(KEYS)}:`);
      const items = indent + (r.chance(0.5) ? 0 : 2);
      for (let i = 0, m = 1 + r.int(3); i < m; i++)
        out.push(
          r.chance(0.2)
            ? `${pad(items)}- ${lineRun(r, items + 2, depth + 1)
                .join("\n")
                .trimStart()}`
            : `${pad(items)}-${gap()}${r.pick(PLAIN)}${tail()}`,
        );
    } else out.push(`${pad(indent)}${r.pick(KEYS)}:`, ...lineRun(r, indent + r.pick(INDENTS), depth + 1));
    if (r.chance(0.3))
      out.push(
        r.pick([
          "",
          pad(r.int(indent + 4)),
          `${pad(r.int(indent + 4))}# comment`,
          `${pad(indent + 2)}${r.pick(PLAIN)}`,
          `${pad(indent + 1)}more words`,
        ]),
      );
  }
  return out.join("\n").split("\n");
}

/** Runs of each property: FUZZ_RUNS when set, else 1,000, or 4,000 under TWINLOCK_SOAK=1 (.ci/run). */
const RUNS = Number(process.env.FUZZ_RUNS || (process.env.TWINLOCK_SOAK === "1" ? 4000 : 1000));

describe("the fast frontmatter parser against the yaml library", () => {
  it("gives the same values and positions on random frontmatter of every shape it reads, and accepts most of it", () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        if (compare(mapping(rng(seed), 0, 0, []))) accepted++;
      }),
      { numRuns: RUNS },
    );
    // The generator is mostly valid YAML in the subset; a parser that declined everything would pass the comparison.
    expect(accepted).toBeGreaterThan(RUNS * 0.05);
  });

  it("never accepts a mutated document unless the yaml library reads it the same way", () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const r = rng(seed);
        if (compare(mutate(r, mapping(r, 0, 0, [])))) accepted++;
      }),
      { numRuns: RUNS },
    );
    expect(accepted).toBeGreaterThan(RUNS * 0.02);
  });

  it("reads the lines it matches in one go, whatever line follows them, as the yaml library does, with positions or without", () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const r = rng(seed);
        const lines = lineRun(r, 0, 0);
        if (r.chance(0.2)) lines.push("");
        if (!compare(lines)) return;
        accepted++;
        const text = lines.join("\n");
        expect(parseSimpleFrontmatter(text, 2, { positions: false, checkedText: true })?.data, text).toEqual(
          parseSimpleFrontmatter(text, 2)?.data,
        );
      }),
      { numRuns: RUNS },
    );
    // About three in ten are read (duplicate keys and odd spacing send the rest to the full parser): enough to test the fast lines.
    expect(accepted).toBeGreaterThan(RUNS * 0.15);
  });

  it("reads text findDeceptiveChar passed, told so (checkedText), exactly as when it looks for refused characters itself", () => {
    let checked = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const r = rng(seed);
        const lines = sprinkle(r, mapping(r, 0, 0, []));
        const text = lines.join("\n");
        if (findDeceptiveChar(text) !== undefined) return;
        checked++;
        const told = parseSimpleFrontmatter(text, 2, { checkedText: true });
        if (told === undefined && (text.includes("\t") || text.includes("\r"))) refused++;
        expect(told, text).toEqual(parseSimpleFrontmatter(text, 2));
      }),
      { numRuns: RUNS },
    );
    // Both ways are tried: text with a tab or CR (refused either way) and text without.
    expect(refused).toBeGreaterThan(RUNS * 0.02);
    expect(checked - refused).toBeGreaterThan(RUNS * 0.2);
  });
});

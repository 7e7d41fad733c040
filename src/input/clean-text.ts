/**
 * Text the agent controls (handoff fields and file names, names in a run
 * file), made safe to print on one terminal line: control and bidi
 * characters replaced, newlines folded, so it cannot move the cursor, erase
 * or forge the lines a person reads around it.
 */
export function cleanText(s: string): string {
  return cleanLines(s).replace(/\n+/g, " ");
}

/** Agent-controlled text of several lines (a file's contents): as cleanText, with its line breaks and tabs kept. */
export function cleanLines(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return showInvisible(s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, "�"));
}

/**
 * Characters a terminal shows as nothing (or as a blank) that a model still
 * reads. Built on first use, as DECEPTIVE is: building a class of every
 * unassigned code point takes most of a millisecond, and most text is plain ASCII.
 */
let invisible: RegExp | undefined;
const INVISIBLE = (): RegExp =>
  // biome-ignore lint/complexity/useRegexLiterals: as a literal, the characters it matches on purpose trip the regex lints
  (invisible ??= new RegExp(
    String.raw`[\p{Cf}\p{Co}\p{Cn}\p{Default_Ignorable_Code_Point}\u115f\u1160\u3164\uffa0\u2800\ufe00-\ufe0f\u{e0100}-\u{e01ef}\u{1d159}]|\u034f`,
    "gu",
  ));

/**
 * Format characters (Unicode category Cf: zero-width spaces and joiners,
 * direction marks and overrides, the tag characters an agent can smuggle
 * instructions in, soft hyphens, byte-order marks), every other character
 * Unicode says to draw as nothing (Default_Ignorable_Code_Point: Mongolian
 * and Khmer ones among them), private-use and unassigned code points,
 * variation selectors, the combining grapheme joiner, Hangul fillers, the
 * braille blank and the musical null notehead, written out as ⟨U+XXXX⟩:
 * a person reading a plan sees that they are there, where a terminal would
 * show nothing and a model would still read them.
 */
export function showInvisible(s: string): string {
  if (isPlainAscii(s)) return s;
  return s.replace(INVISIBLE(), (c) => `⟨U+${(c.codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}⟩`);
}

/**
 * Characters that make text read one way on a terminal or to another parser
 * and another way to twinlock: C0 and C1 controls (tab and line feed
 * excepted), a carriage return not followed by a line feed (a line break in
 * YAML 1.2, an overprint on a terminal), DEL, the line and paragraph
 * separators, every format character (Unicode Cf: direction controls,
 * zero-width spaces and joiners, soft hyphens, byte-order marks, tag
 * characters) and every other default-ignorable one (drawn as nothing:
 * U+17B4, U+180B…), variation selectors, the combining grapheme joiner, and
 * the blank-looking Hangul fillers, braille blank and musical null notehead.
 */
let deceptive: RegExp | undefined;
const DECEPTIVE = (): RegExp =>
  // biome-ignore lint/complexity/useRegexLiterals: as a literal, the characters it matches on purpose trip the regex lints
  (deceptive ??= new RegExp(
    String.raw`[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\u115f\u1160\u3164\uffa0\u2800\ufe00-\ufe0f]|\u034f|\p{Cf}|\p{Default_Ignorable_Code_Point}|[\u{e0100}-\u{e01ef}\u{1d159}]|\r(?!\n)`,
    "u",
  ));

/** An emoji with its optional presentation selector, joined to more by zero-width joiners. */
let emojiSequence: RegExp | undefined;
const EMOJI_SEQUENCE = (): RegExp => (emojiSequence ??= /\p{Extended_Pictographic}\uFE0F?(?:\u200D\p{Extended_Pictographic}\uFE0F?)*/gu);

/**
 * Whether `text` is printable ASCII, tabs and line ends only. Such text holds
 * no deceptive character (see DECEPTIVE) but a carriage return not followed
 * by a line feed.
 */
export function isPlainAscii(text: string): boolean {
  return !/[^\t\n\r\u0020-\u007e]/.test(text);
}

/** Where the first deceptive character of `text` is (see DECEPTIVE), as a 1-based line and column and the code point, or undefined. */
export function findDeceptiveChar(text: string): { line: number; col: number; codePoint: string } | undefined {
  // Most text is printable ASCII with tabs and line ends: one quick look settles it (a plain character class, and a
  // look for a lone CR only in text that has a CR, took a quarter less time over a suite than one pattern with both).
  if (isPlainAscii(text) && !(text.includes("\r") && /\r(?!\n)/.test(text))) return undefined;
  // Emoji written the usual way keep their presentation selector (U+FE0F) and joiners (U+200D): ⚠️, 👩‍💻.
  const m = DECEPTIVE().exec(text.replace(EMOJI_SEQUENCE(), (seq) => "x".repeat(seq.length)));
  if (!m) return undefined;
  const before = text.slice(0, m.index);
  const lastNl = before.lastIndexOf("\n");
  const codePoint = `U+${(m[0].codePointAt(0) as number).toString(16).toUpperCase().padStart(4, "0")}`;
  return { line: before.split("\n").length, col: m.index - lastNl, codePoint };
}

/**
 * What keeps a one-line name (a file name, an environment) from reading as
 * itself: a deceptive character (see findDeceptiveChar), or a tab or line
 * feed, which text may hold but a name may not. Undefined when it is plain.
 */
export function findHiddenInName(name: string): { codePoint: string } | undefined {
  return findDeceptiveChar(name) ?? (/[\t\n]/.test(name) ? { codePoint: "a tab or line feed" } : undefined);
}

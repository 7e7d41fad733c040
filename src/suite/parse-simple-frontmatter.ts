import type { Position } from "./prompt.js";

/** What the fast path yields: the same values and positions the `yaml` library would. */
export interface SimpleFrontmatter {
  data: Record<string, unknown>;
  positions: Map<string, Position>;
}

/**
 * Parse the YAML that prompt frontmatter really uses (nested block maps, block
 * sequences of scalars and of maps — indented or not —, anchors and aliases,
 * multi-line plain and quoted scalars, literal and folded block scalars, flow
 * lists of scalars on one line, comments) many times faster than a full YAML
 * parser. Returns undefined for anything outside that subset — tags,
 * directives, flow maps, complex keys, tabs, odd indentation, anything it is
 * unsure of — and the caller then uses the `yaml` library, so the result is
 * always exactly what the `yaml` library gives (YAML 1.2 core schema, values
 * and positions); property and mutation tests hold the two to that.
 * `firstLine` is the file line of the first YAML line. Positions are kept for
 * top-level keys (`key`), top-level values (`key=`) and the items of top-level
 * sequences (`key[i]`). `options.text`, when given, must be the lines joined by
 * `\n` (a caller that has it saves joining them again). `options.checkedText`
 * says findDeceptiveChar (src/input/clean-text.ts) found nothing in that text:
 * of the characters refused here it lets through only tabs and carriage
 * returns before a line feed, so only those are looked for.
 */
export function parseSimpleFrontmatter(
  lines: readonly string[],
  firstLine: number,
  options: { positions?: boolean; text?: string; checkedText?: boolean } = {},
): SimpleFrontmatter | undefined {
  const text = options.text ?? lines.join("\n");
  if (options.checkedText ? text.includes("\t") || text.includes("\r") : REFUSED_CHARS.test(text)) return undefined;
  try {
    return new BlockParser(lines, firstLine).document(options.positions !== false);
  } catch (error) {
    // Nesting deep enough to exhaust the stack is left to the full parser too, which reports it.
    if (error === OUTSIDE_SUBSET || error instanceof RangeError) return undefined;
    throw error;
  }
}

/** Thrown (and caught above) the moment the input leaves the subset. */
const OUTSIDE_SUBSET = Symbol("outside the fast frontmatter subset");

function outside(): never {
  throw OUTSIDE_SUBSET;
}

/** Characters the subset refuses anywhere: tabs, other controls, and breaks YAML treats specially (the lines are tested joined by `\n`). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const REFUSED_CHARS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;
/**
 * A plain key and its `:`, followed by a space or the line's end; sticky, so it is tried at one index only. Not
 * the keys the core schema would not resolve to a string (null, true, false), nor `__proto__`, which no plain
 * object may take: a line with one is no entry, so outside the subset.
 */
const KEY = /(?!(?:null|Null|NULL|true|True|TRUE|false|False|FALSE|__proto__):)[A-Za-z_][A-Za-z0-9_.-]*:(?= |$)/y;
/*
 * The expressions below are sticky: each is tried at one index of a line (set in lastIndex), so no part of the
 * line is sliced off to be tested.
 */
const ANCHOR = /&([A-Za-z0-9_-]+)(?= |$)/y;
const ALIAS = /\*([A-Za-z0-9_-]+) *$/y;
/** A plain scalar may not start with these (YAML 1.2 indicators), nor with `- ` or a lone `-`. */
const PLAIN_START = /[?:,[\]{}#&*!|>'"%@`]|-(?: |$)/y;
/** PLAIN_START for an item of a flow sequence, which may end at a `,` or at the `]`. */
const FLOW_PLAIN_START = /[?:,[\]{}#&*!|>'"%@`]|-(?=[ ,\]]|$)/y;
/** Text of a plain item of a flow sequence up to the `,` or `]` that ends it; the characters it stops at are refused in an item. */
const FLOW_PLAIN = /[^[\]{}#:,]*/y;
/** What may follow a closed flow sequence or quoted scalar on its line: spaces, or spaces and a comment. */
const LINE_REST = /(?: *| +#.*)$/y;
const EMPTY_MAP = /\{\}(?: *| +#.*)$/y;
const BLOCK_HEADER = /([|>])([-+]?)(?: +#.*| *)$/y;
/**
 * For each ASCII character, whether a plain scalar may start with it whatever follows: 0 if not (an indicator, `-`,
 * a space or a control), PLAIN_TEXT if such a scalar is always text, 2 if it may resolve to something else (null,
 * a boolean or a number: `~`, `n`, `t`, `f` in either case, a digit, `+` or `.`).
 */
const PLAIN_FIRST = new Uint8Array(128);
const PLAIN_TEXT = 1;
for (let ch = 33; ch < 127; ch++) {
  const c = String.fromCharCode(ch);
  if (!"?:,[]{}#&*!|>'\"%@`-".includes(c)) PLAIN_FIRST[ch] = /[~nNtTfF0-9+.]/.test(c) ? 2 : PLAIN_TEXT;
}
/**
 * The rest of a line from a plain scalar's first character when the scalar is all of it: no ` #` comment, no
 * `: `, no trailing space and no `:` at the end. Sticky.
 */
const ONE_LINE_PLAIN = /.(?:[^ :]|:(?=[^ ])| +(?=[^ #]))*$/y;
/** More uses of one anchor than this are left to the full parser's alias accounting. */
const MAX_ALIASES_PER_ANCHOR = 50;

class BlockParser {
  private readonly indents: number[];
  private i = 0;
  private readonly anchors = new Map<string, { value: unknown; uses: number }>();
  private aliasesSeen = 0;

  constructor(
    private readonly lines: readonly string[],
    private readonly firstLine: number,
  ) {
    const indents = new Array<number>(lines.length);
    for (let k = 0; k < lines.length; k++) {
      const line = lines[k] as string;
      let n = 0;
      while (line[n] === " ") n++;
      indents[k] = n;
    }
    this.indents = indents;
  }

  /** The whole document; `withPositions` false leaves `positions` empty (a caller can ask again when it needs them). */
  document(withPositions: boolean): SimpleFrontmatter | undefined {
    this.skipBlank();
    // An empty frontmatter is not a mapping in YAML: let the full parser say so.
    if (this.i >= this.lines.length || this.indents[this.i] !== 0 || keyEnd(this.lines[this.i] as string, 0) === -1) outside();
    const positions = new Map<string, Position>();
    const data = this.map(0, withPositions ? positions : undefined);
    this.skipBlank();
    if (this.i < this.lines.length) outside();
    return { data, positions };
  }

  /** Skip blank lines and comment lines. */
  private skipBlank(): void {
    const { lines, indents } = this;
    let i = this.i;
    while (i < lines.length && isBlankOrComment(lines[i] as string, indents[i] as number)) i++;
    this.i = i;
  }

  private pos(line: number, col: number): Position {
    return { line: this.firstLine + line, col };
  }

  /**
   * Where the node just parsed starts, as the `yaml` library reports it, and
   * (with positions asked for) its items when it is a sequence. Set by
   * `value` as it returns, so no object is made per node.
   */
  private nodeLine = 0;
  private nodeCol = 0;
  private nodeItems: Array<{ line: number; col: number }> | undefined;

  private setNode(line: number, col: number, items?: Array<{ line: number; col: number }>): void {
    this.nodeLine = line;
    this.nodeCol = col;
    this.nodeItems = items;
  }

  /** The next line of a block whose entries sit at `indent`, or undefined where the block ends; a deeper line is outside the subset. */
  private nextEntry(indent: number): string | undefined {
    const { lines, indents } = this;
    for (let i = this.i; i < lines.length; i++) {
      const line = lines[i] as string;
      const lineIndent = indents[i] as number;
      // isBlankOrComment, written out: this runs for every entry, mostly before V8 has compiled it.
      if (lineIndent === line.length || line[lineIndent] === "#") continue;
      this.i = i;
      if (lineIndent < indent) return undefined;
      if (lineIndent > indent) outside();
      return line;
    }
    this.i = lines.length;
    return undefined;
  }

  /** A block mapping whose keys sit at `indent`, starting at the current line. */
  private map(indent: number, positions?: Map<string, Position>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (let line = this.nextEntry(indent); line !== undefined; line = this.nextEntry(indent)) {
      KEY.lastIndex = indent;
      if (!KEY.test(line)) {
        // A sequence at the same indent belongs to an enclosing indentless sequence; anything else is outside.
        if (isSeqItem(line, indent)) break;
        outside();
      }
      const end = KEY.lastIndex - 1;
      const key = line.slice(indent, end);
      if (key.length > 1000 || Object.hasOwn(out, key)) outside();
      const keyLine = this.i;
      out[key] = this.value(line, end + 1, indent, true, positions !== undefined);
      if (positions) this.keep(positions, key, keyLine, indent);
    }
    return out;
  }

  /** Record where the entry `key` (on line `keyLine`, at `indent`) and its value start, from `nodeLine`, `nodeCol` and `nodeItems`. */
  private keep(positions: Map<string, Position>, key: string, keyLine: number, indent: number): void {
    positions.set(key, this.pos(keyLine, indent + 1));
    const items = this.nodeItems;
    if (items) for (const [n, item] of items.entries()) positions.set(`${key}[${n}]`, this.pos(item.line, item.col));
    else positions.set(`${key}=`, this.pos(this.nodeLine, this.nodeCol));
  }

  /** A block sequence whose dashes sit at `indent`; `items` collects where each item starts. */
  private seq(indent: number, items?: Array<{ line: number; col: number }>): unknown[] {
    const value: unknown[] = [];
    for (let line = this.nextEntry(indent); line !== undefined; line = this.nextEntry(indent)) {
      if (!isSeqItem(line, indent)) {
        if (keyEnd(line, indent) !== -1) break; // the next key of the map this indentless sequence belongs to
        outside();
      }
      value.push(this.value(line, indent + 1, indent, false, false));
      items?.push({ line: this.nodeLine, col: this.nodeCol });
    }
    return value;
  }

  /**
   * The node after a `key:` or `-` indicator that ends just before index
   * `after` of `line`, the current line. `parent` is the indent of the
   * collection the node belongs to; continuation lines must be deeper.
   * `wantItems` asks for the items' positions when the node is a sequence.
   */
  private value(line: string, after: number, parent: number, inMap: boolean, wantItems: boolean): unknown {
    let c = after;
    while (line[c] === " ") c++;
    if (c === line.length) return this.nested(parent, inMap, this.i++, c + 1, false, wantItems);
    // Most values are a plain scalar that starts with a character no other node can, and ends the line: one
    // native match reads it without the anchor, collection and comment checks. In a sequence such an item is no
    // `key: value` either, as it holds no `: ` and does not end with `:`.
    const first = line.charCodeAt(c);
    const kind = first < 128 ? PLAIN_FIRST[first] : 0;
    if (kind !== 0) {
      ONE_LINE_PLAIN.lastIndex = c;
      const { lines, indents } = this;
      const next = this.i + 1;
      // ... and no line below continues it: the next line is neither blank nor deeper than `parent`.
      if (
        ONE_LINE_PLAIN.test(line) &&
        (next === lines.length || ((indents[next] as number) <= parent && indents[next] !== (lines[next] as string).length))
      ) {
        this.nodeLine = this.i;
        this.nodeCol = c + 1;
        this.nodeItems = undefined;
        this.i = next;
        const text = line.slice(c);
        return kind === PLAIN_TEXT ? text : resolvePlain(text);
      }
      if (inMap || keyEnd(line, c) === -1) {
        this.setNode(this.i, c + 1);
        return this.plain(line, c, parent);
      }
      return this.inItem(c, false);
    }
    return this.node(line, c, parent, inMap, wantItems);
  }

  /** `- - x` or `- key: value`, a sequence (`isSeq`) or mapping starting inside an item of the current line: its indent is the column `c`. */
  private inItem(c: number, isSeq: boolean): unknown {
    const lineNo = this.i;
    this.indents[lineNo] = c;
    const value = isSeq ? this.seq(c) : this.map(c);
    this.setNode(lineNo, c + 1);
    return value;
  }

  /** Any node `value` does not read itself, starting at index `c` of `line` (past the spaces after the indicator). */
  private node(line: string, c: number, parent: number, inMap: boolean, wantItems: boolean): unknown {
    const lineNo = this.i;
    const length = line.length;
    let anchor: string | undefined;
    ANCHOR.lastIndex = c;
    const a = line[c] === "&" ? ANCHOR.exec(line) : null;
    if (a) {
      anchor = a[1] as string;
      c = ANCHOR.lastIndex;
      while (line[c] === " ") c++;
    }
    let value: unknown;
    if (c === length || line[c] === "#") {
      this.i++;
      value = this.nested(parent, inMap, lineNo, c + 1, anchor !== undefined, wantItems);
    } else if (!inMap && anchor === undefined && (isSeqItem(line, c) || keyEnd(line, c) !== -1)) {
      value = this.inItem(c, isSeqItem(line, c));
    } else {
      value = this.inlineValue(line, lineNo, c, parent, anchor !== undefined, wantItems);
    }
    if (anchor !== undefined) {
      // A name anchored twice resolves by where each anchor starts, not ends: left to the full parser.
      if (this.anchors.has(anchor)) outside();
      this.anchors.set(anchor, { value, uses: 0 });
    }
    return value;
  }

  /**
   * What follows an indicator with nothing after it on its line (the line `emptyLine`, the current line being the
   * one after it): a deeper collection, an indentless sequence, or null.
   */
  private nested(parent: number, inMap: boolean, emptyLine: number, emptyCol: number, anchored: boolean, wantItems: boolean): unknown {
    this.skipBlank();
    const start = this.i;
    const indent = start < this.lines.length ? (this.indents[start] as number) : -1;
    const aliasesBefore = this.aliasesSeen;
    const items = wantItems ? [] : undefined;
    let value: unknown;
    if (indent >= parent && isSeqItem(this.lines[start] as string, indent) && (indent > parent || inMap)) value = this.seq(indent, items);
    // A deeper line that is no `key:` is a scalar on the next line: the map refuses it.
    else if (indent > parent) value = this.map(indent);
    else {
      this.setNode(emptyLine, emptyCol);
      return null;
    }
    // An anchored collection holding aliases is left to the full parser (its alias-count accounting).
    if (anchored && this.aliasesSeen !== aliasesBefore) outside();
    this.setNode(start, indent + 1, Array.isArray(value) ? items : undefined);
    return value;
  }

  /** A scalar, alias or one-line flow sequence starting at index `c` of `line`, line `lineNo`. */
  private inlineValue(line: string, lineNo: number, c: number, parent: number, anchored: boolean, wantItems: boolean): unknown {
    this.setNode(lineNo, c + 1);
    const first = line[c];
    if (first === "*") {
      ALIAS.lastIndex = c;
      const m = ALIAS.exec(line);
      if (!m || anchored) outside();
      const target = this.anchors.get(m[1] as string);
      if (!target || ++target.uses > MAX_ALIASES_PER_ANCHOR) outside();
      this.aliasesSeen++;
      this.i++;
      return target.value;
    }
    if (first === "[") {
      this.i++;
      const items = wantItems ? ([] as Array<{ line: number; col: number }>) : undefined;
      const value = flowSequence(line, c, lineNo, items);
      this.setNode(lineNo, c + 1, items);
      return value;
    }
    if (first === "{") {
      EMPTY_MAP.lastIndex = c;
      if (!EMPTY_MAP.test(line)) outside();
      this.i++;
      return {};
    }
    if (first === "|" || first === ">") return this.blockScalar(line, c, parent);
    if (first === "'" || first === '"') return this.quoted(line, c, parent);
    PLAIN_START.lastIndex = c;
    if (PLAIN_START.test(line)) outside();
    return this.plain(line, c, parent);
  }

  /** A plain scalar starting at index `c` of `line`, the current line, with its continuation lines folded. */
  private plain(line: string, c: number, parent: number): unknown {
    const hash = line.indexOf(" #", c);
    const text = line.slice(c, plainEnd(line, c, hash));
    const next = ++this.i;
    if (hash !== -1 || next === this.lines.length) return resolvePlain(text);
    // Most plain scalars are one line: the next line is neither blank nor deeper.
    const indent = this.indents[next] as number;
    if (indent <= parent && indent !== (this.lines[next] as string).length) return resolvePlain(text);
    return this.fold(text, parent);
  }

  /** The rest of a plain scalar whose first line is `text`, from the current line: its continuation lines folded. */
  private fold(text: string, parent: number): unknown {
    const { lines, indents } = this;
    let multiLine = false;
    let breaks = 0;
    while (this.i < lines.length) {
      const line = lines[this.i] as string;
      const indent = indents[this.i] as number;
      if (indent === line.length) {
        breaks++;
        this.i++;
        continue;
      }
      if (indent <= parent || line.charCodeAt(indent) === 35) break;
      PLAIN_START.lastIndex = indent;
      if (PLAIN_START.test(line)) outside();
      const hash = line.indexOf(" #", indent);
      text += breaks > 0 ? "\n".repeat(breaks) : " ";
      text += line.slice(indent, plainEnd(line, indent, hash));
      breaks = 0;
      multiLine = true;
      this.i++;
      if (hash !== -1) break;
    }
    // Blank lines after the scalar belong to nothing: step back so the caller sees them as blank.
    this.i -= breaks;
    return multiLine ? text : resolvePlain(text);
  }

  /** A single- or double-quoted scalar starting at index `c` of `line`, the current line, possibly over several lines. */
  private quoted(line: string, c: number, parent: number): string {
    const quote = line[c] as string;
    const end = findClosingQuote(line, c + 1, quote);
    // Most quoted scalars close on their own line: read those without collecting their lines.
    if (end !== -1) {
      LINE_REST.lastIndex = end + 1;
      if (!LINE_REST.test(line)) outside();
      this.i++;
      return unquote(line.slice(c + 1, end), quote);
    }
    const pieces: string[] = [];
    let lineText = line.slice(c + 1);
    for (;;) {
      if (quote === '"' && ESCAPED_BREAK.test(lineText)) outside();
      pieces.push(lineText);
      this.i++;
      if (this.i >= this.lines.length) outside();
      const indent = this.indents[this.i] as number;
      const next = this.lines[this.i] as string;
      if (indent <= parent && indent < next.length) outside();
      lineText = next.slice(indent);
      const close = findClosingQuote(lineText, 0, quote);
      if (close !== -1) {
        pieces.push(lineText.slice(0, close));
        LINE_REST.lastIndex = close + 1;
        if (!LINE_REST.test(lineText)) outside();
        break;
      }
    }
    this.i++;
    return foldQuoted(pieces, quote);
  }

  /** A literal (`|`) or folded (`>`) block scalar with clip, strip (`-`) or keep (`+`) chomping, its header at index `c` of `line`. */
  private blockScalar(line: string, c: number, parent: number): string {
    BLOCK_HEADER.lastIndex = c;
    const m = BLOCK_HEADER.exec(line);
    if (!m) outside();
    const literal = m[1] === "|";
    const chomp = m[2];
    this.i++;
    let contentIndent = -1;
    const body: string[] = [];
    while (this.i < this.lines.length) {
      const next = this.lines[this.i] as string;
      const indent = this.indents[this.i] as number;
      if (indent === next.length) {
        // A blank line holding spaces past the content indent keeps them (or is an error): left to the full parser.
        if (indent > 0 && (contentIndent === -1 || indent > contentIndent)) outside();
        body.push("");
        this.i++;
        continue;
      }
      if (contentIndent === -1) {
        if (indent <= parent) break;
        contentIndent = indent;
      }
      if (indent < contentIndent) break;
      if (indent > contentIndent) outside(); // more-indented lines
      body.push(next.slice(contentIndent));
      this.i++;
    }
    // The document's last line has no line break of its own: when blank, it adds none to the scalar.
    if (this.i === this.lines.length && body[body.length - 1] === "") body.pop();
    let trailing = 0;
    while (body.length > 0 && body[body.length - 1] === "") {
      body.pop();
      trailing++;
    }
    // A scalar with no content is left to the full parser; trailing blank lines count only when kept (`+`).
    if (contentIndent === -1 || body.length === 0) outside();
    let text: string;
    if (literal) text = body.join("\n");
    else {
      // Leading blank lines stay line breaks; between two lines of text a single break folds to a space.
      let n = 0;
      while (body[n] === "") n++;
      text = "\n".repeat(n) + (body[n] as string);
      let breaks = 0;
      for (n++; n < body.length; n++) {
        const piece = body[n] as string;
        if (piece === "") {
          breaks++;
          continue;
        }
        text += breaks > 0 ? "\n".repeat(breaks) : " ";
        text += piece;
        breaks = 0;
      }
    }
    if (chomp === "-") return text;
    if (chomp === "+") return `${text}\n${"\n".repeat(trailing)}`;
    return `${text}\n`;
  }
}

/**
 * Where the plain key starting at `from` ends (the index of its `:`), or -1
 * when the line has no `key:` there: `[A-Za-z_][A-Za-z0-9_.-]*` then `:`
 * followed by a space or the line's end. One sticky regular expression: it
 * runs once per frontmatter line, and in a short-lived process most lines are
 * read before a hand-written loop would be compiled.
 */
function keyEnd(line: string, from: number): number {
  KEY.lastIndex = from;
  return KEY.test(line) ? KEY.lastIndex - 1 : -1;
}

function isBlankOrComment(line: string, indent: number): boolean {
  return indent === line.length || line.charCodeAt(indent) === 35;
}

function isSeqItem(line: string, indent: number): boolean {
  return line.charCodeAt(indent) === 45 && (line.length === indent + 1 || line.charCodeAt(indent + 1) === 32);
}

/**
 * Where the text of one line of a plain scalar ends: before `hash` (the index of its ` #`, or -1) and trailing
 * spaces. `from` is where the text starts, at a character that is not a space. Outside the subset if the text
 * holds `: ` or ends with `:`.
 */
function plainEnd(line: string, from: number, hash: number): number {
  let end = hash === -1 ? line.length : hash;
  while (line.charCodeAt(end - 1) === 32) end--;
  const colon = line.indexOf(": ", from);
  if ((colon !== -1 && colon + 1 < end) || line.charCodeAt(end - 1) === 58) outside();
  return end;
}

/** Resolve a one-line plain scalar by the YAML 1.2 core schema, exactly as the `yaml` library does. */
function resolvePlain(text: string): unknown {
  const c = text.charCodeAt(0);
  // Decided by the first character: most values are text that starts with none of these.
  switch (c) {
    case 126 /* ~ */:
      return text === "~" ? null : text;
    case 110 /* n */:
    case 78 /* N */:
      return text === "null" || text === "Null" || text === "NULL" ? null : text;
    case 116 /* t */:
    case 84 /* T */:
      return text === "true" || text === "True" || text === "TRUE" ? true : text;
    case 102 /* f */:
    case 70 /* F */:
      return text === "false" || text === "False" || text === "FALSE" ? false : text;
  }
  // Only text starting with a digit, a sign or a dot can be a number; the empty text is null.
  if (!((c >= 48 && c <= 57) || c === 43 || c === 45 || c === 46)) return text === "" ? null : text;
  if (OCTAL.test(text)) return Number.parseInt(text.substring(2), 8);
  if (DECIMAL.test(text)) return Number.parseInt(text, 10);
  if (HEX.test(text)) return Number.parseInt(text.substring(2), 16);
  if (INF_OR_NAN.test(text))
    return text.slice(-3).toLowerCase() === "nan" ? Number.NaN : text[0] === "-" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  if (EXPONENTIAL.test(text) || FLOAT.test(text)) return Number.parseFloat(text);
  return text;
}

/*
 * The core schema's number forms. Here, not in resolvePlain: a regular expression literal in a function is a new
 * object each time the function reaches it.
 */
const OCTAL = /^0o[0-7]+$/;
const DECIMAL = /^[-+]?[0-9]+$/;
const HEX = /^0x[0-9a-fA-F]+$/;
const INF_OR_NAN = /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/;
const EXPONENTIAL = /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/;
const FLOAT = /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/;

/**
 * `[a, 'b', "c"]` on one line, from index `c` of `line` (its `[`): plain or quoted scalars, no nesting. `items`
 * collects where each item starts, `lineNo` being the line's index.
 */
function flowSequence(line: string, c: number, lineNo: number, items?: Array<{ line: number; col: number }>): unknown[] {
  const close = line.lastIndexOf("]");
  LINE_REST.lastIndex = close + 1;
  if (close < c || !LINE_REST.test(line)) outside();
  let k = c + 1;
  while (line[k] === " ") k++;
  if (k === close) return [];
  const out: unknown[] = [];
  for (;;) {
    while (line[k] === " ") k++;
    items?.push({ line: lineNo, col: k + 1 });
    const ch = line[k];
    let item: unknown;
    if (ch === "'" || ch === '"') {
      // A closing quote past the `]` is no closing quote of this item.
      const end = findClosingQuote(line, k + 1, ch);
      if (end === -1 || end > close) outside();
      item = unquote(line.slice(k + 1, end), ch);
      k = end + 1;
      while (line[k] === " ") k++;
    } else {
      let e = line.indexOf(",", k);
      if (e === -1 || e > close) e = close;
      let end = e;
      while (end > k && line[end - 1] === " ") end--;
      // The item (to the `,` or `]`, less trailing spaces) is a plain scalar holding none of `[]{}#:`.
      FLOW_PLAIN_START.lastIndex = k;
      FLOW_PLAIN.lastIndex = k;
      FLOW_PLAIN.test(line);
      if (end === k || FLOW_PLAIN_START.test(line) || FLOW_PLAIN.lastIndex !== e) outside();
      item = resolvePlain(line.slice(k, end));
      k = e;
    }
    out.push(item);
    if (k >= close) break;
    if (line[k] !== ",") outside();
    k++;
    let next = k;
    while (line[next] === " ") next++;
    if (next >= close) outside(); // a trailing comma
  }
  return out;
}

/**
 * Index in `text` of the quote closing a scalar whose text starts at `from` (just past the opening quote), or -1
 * when `text` does not close it: in single quotes `''` is a quote inside the text, in double quotes a backslash
 * escapes the next character. Found with indexOf, which a short-lived process runs natively, not by walking the
 * characters.
 */
function findClosingQuote(text: string, from: number, quote: string): number {
  if (quote === "'") {
    for (let k = text.indexOf("'", from); k !== -1; k = text.indexOf("'", k + 2)) if (text[k + 1] !== "'") return k;
    return -1;
  }
  // Each search starts past the last one, so a line of many backslashes costs one pass, not one per backslash.
  let close = text.indexOf('"', from);
  let backslash = text.indexOf("\\", from);
  while (close !== -1 && backslash !== -1 && backslash < close) {
    const next = backslash + 2;
    if (close < next) close = text.indexOf('"', next);
    backslash = text.indexOf("\\", next);
  }
  return close;
}

/** The text of a quoted scalar's piece, its quotes' escapes undone. */
function unquote(piece: string, quote: string): string {
  if (quote === '"') return piece.includes("\\") ? unescapeDouble(piece) : piece;
  return piece.includes("''") ? piece.replace(TWO_QUOTES, "'") : piece;
}

/**
 * A quoted scalar from the `pieces` of its lines, unquoted and folded: trailing spaces of a line and leading spaces
 * of the next go; one break is a space, n+1 breaks are n newlines.
 */
function foldQuoted(pieces: string[], quote: string): string {
  const last = pieces.length - 1;
  let out = unquote((pieces[0] as string).replace(TRAILING_SPACES, ""), quote);
  let breaks = 0;
  for (let n = 1; n <= last; n++) {
    const piece = (pieces[n] as string).replace(n === last ? LEADING_SPACES : EDGE_SPACES, "");
    if (piece === "" && n < last) {
      breaks++;
      continue;
    }
    out += breaks > 0 ? "\n".repeat(breaks) : " ";
    out += unquote(piece, quote);
    breaks = 0;
  }
  return out;
}

/* The expressions of quoted, unquote and foldQuoted, out of them for the reason given above OCTAL. */
/** A line of a double-quoted scalar ending in an escaped line break: an odd number of backslashes. */
const ESCAPED_BREAK = /(^|[^\\])(\\\\)*\\$/;
const TWO_QUOTES = /''/g;
const TRAILING_SPACES = / +$/;
const LEADING_SPACES = /^ +/;
const EDGE_SPACES = /^ +| +$/g;

const SIMPLE_ESCAPES: Record<string, string> = {
  "0": "\0",
  a: "\x07",
  b: "\b",
  t: "\t",
  n: "\n",
  v: "\v",
  f: "\f",
  r: "\r",
  e: "\x1b",
  " ": " ",
  '"': '"',
  "/": "/",
  "\\": "\\",
  N: "\u0085",
  _: "\u00a0",
  L: "\u2028",
  P: "\u2029",
};

/** The escapes of a double-quoted YAML scalar; anything unusual is left to the full parser. */
function unescapeDouble(raw: string): string {
  let out = "";
  for (let k = 0; k < raw.length; k++) {
    const ch = raw[k] as string;
    if (ch !== "\\") {
      out += ch;
      continue;
    }
    const e = raw[++k];
    if (e === undefined) outside();
    const simple = Object.hasOwn(SIMPLE_ESCAPES, e) ? SIMPLE_ESCAPES[e] : undefined;
    if (simple !== undefined) {
      out += simple;
      continue;
    }
    const len = e === "x" ? 2 : e === "u" ? 4 : e === "U" ? 8 : 0;
    const hex = raw.slice(k + 1, k + 1 + len);
    if (len === 0 || hex.length !== len || !HEX_DIGITS.test(hex)) outside();
    const code = Number.parseInt(hex, 16);
    if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) outside();
    out += String.fromCodePoint(code);
    k += len;
  }
  return out;
}

const HEX_DIGITS = /^[0-9a-fA-F]+$/;

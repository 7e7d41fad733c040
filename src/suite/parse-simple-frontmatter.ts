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
 * `text` is the YAML with its lines ended by `\n` alone (no CR), and
 * `firstLine` is the file line of its first line. Positions are kept for
 * top-level keys (`key`), top-level values (`key=`) and the items of top-level
 * sequences (`key[i]`). `options.checkedText` says findDeceptiveChar
 * (src/input/clean-text.ts) found nothing in the text: of the characters
 * refused here it lets through only tabs and carriage returns before a line
 * feed, so only those are looked for.
 *
 * The text is read in place, by offsets, never split into lines: in a
 * short-lived process most of it is read before V8 compiles the parser, so
 * what counts is the work per line — a typical `key: value` line costs one
 * sticky regular expression for the key and one for the value.
 */
export function parseSimpleFrontmatter(
  text: string,
  firstLine: number,
  options: { positions?: boolean; checkedText?: boolean } = {},
): SimpleFrontmatter | undefined {
  if (options.checkedText ? text.includes("\t") || text.includes("\r") : REFUSED_CHARS.test(text)) return undefined;
  try {
    return new BlockParser(text, firstLine).document(options.positions !== false);
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

/** Characters the subset refuses anywhere: tabs, other controls, and breaks YAML treats specially. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
const REFUSED_CHARS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\ufeff]/;
/*
 * The expressions below are sticky: each is tried at one index of the text (set in lastIndex), so no part of it is
 * sliced off to be tested. They are multi-line, so `$` is a line's end: `\n` is the only line break that reaches
 * them (CR, U+2028 and U+2029 are refused above), and none of them reads past one.
 */
/**
 * A plain key and its `:`, followed by a space or the line's end. Not the keys the core schema would not resolve to
 * a string (null, true, false), nor `__proto__`, which no plain object may take: a line with one is no entry, so
 * outside the subset.
 */
const KEY_TEXT = "(?!(?:null|Null|NULL|true|True|TRUE|false|False|FALSE|__proto__):)[A-Za-z_][A-Za-z0-9_.-]*:";
const KEY = new RegExp(`${KEY_TEXT}(?= |$)`, "my");
const ANCHOR = /&([A-Za-z0-9_-]+)(?= |$)/my;
/** An alias and the rest of its line. */
const ALIAS = /\*[A-Za-z0-9_-]+ *$/my;
/** A plain scalar may not start with these (YAML 1.2 indicators), nor with `- ` or a lone `-`. */
const PLAIN_START = /[?:,[\]{}#&*!|>'"%@`]|-(?: |$)/my;
/** PLAIN_START for an item of a flow sequence, which may end at a `,` or at the `]`. */
const FLOW_PLAIN_START = /[?:,[\]{}#&*!|>'"%@`]|-(?=[ ,\]]|$)/my;
/** Text of a plain item of a flow sequence up to the `,` or `]` that ends it; the characters it stops at are refused in an item. */
const FLOW_PLAIN = /[^[\]{}#:,\n]*/y;
/** What may follow a closed flow sequence or quoted scalar on its line: spaces, or spaces and a comment. */
const LINE_REST = /(?: *| +#.*)$/my;
const EMPTY_MAP = /\{\}(?: *| +#.*)$/my;
const BLOCK_HEADER = /([|>])([-+]?)(?: +#.*| *)$/my;
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
/** The characters PLAIN_FIRST lets a plain scalar start with, as a class of a regular expression. */
const PLAIN_FIRST_CLASS = `[${[...PLAIN_FIRST.keys()]
  .filter((ch) => PLAIN_FIRST[ch] !== 0)
  .map((ch) => `\\x${ch.toString(16)}`)
  .join("")}]`;
/** The rest of a plain scalar's first line after its first character, when the scalar is all of the line: no ` #` comment, no `: `, no trailing space and no `:` at the end. */
const PLAIN_REST = "(?:[^ :\\n]|:(?=[^ \\n])| +(?=[^ #\\n]))*$";
/** A one-line plain scalar from its first character, whatever that is. */
const ONE_LINE_PLAIN = new RegExp(`.${PLAIN_REST}`, "my");
/**
 * The end of a line and, when the next line is neither blank nor a comment, its indent: a match that ends on a
 * character that is no line feed stopped on that line's first character, so a block reads its next entry from it
 * without counting spaces again.
 */
const TO_NEXT_LINE = "(?:\\n *(?=[^ \\n#]))?";
/**
 * The lines most frontmatter is made of, each read with one native match: `key:` with nothing after it, or
 * `key: value` where the value is a plain scalar that is all of the line after one space (KEY_LINE); `- value`
 * likewise (ITEM_LINE). Both go on to the next line as TO_NEXT_LINE says.
 */
const KEY_LINE = new RegExp(`${KEY_TEXT}(?: ${PLAIN_FIRST_CLASS}${PLAIN_REST}|$)${TO_NEXT_LINE}`, "my");
const ITEM_LINE = new RegExp(`- ${PLAIN_FIRST_CLASS}${PLAIN_REST}${TO_NEXT_LINE}`, "my");
/** More uses of one anchor than this are left to the full parser's alias accounting. */
const MAX_ALIASES_PER_ANCHOR = 50;

/**
 * Reads the text line by line through one cursor: `at` and `indent` say where the current line starts and how far
 * it is indented. Every node leaves the cursor on the first line after it that is neither blank nor a comment, so
 * a block reads its next entry from the cursor alone; the scalars that hold blank lines read those lines themselves.
 */
class BlockParser {
  private readonly length: number;
  /** Offset of the current line's first character; past the text's end once it is all read. */
  private at = 0;
  /** The current line's indent; -1 once the text is all read, so that every block ends there. */
  private indent = -1;
  private readonly anchors = new Map<string, { value: unknown; uses: number }>();
  private aliasesSeen = 0;
  /**
   * Where the node just parsed starts, as the `yaml` library reports it, and
   * (with positions asked for) where its items start when it is a sequence:
   * offsets into the text, set as the node is read, so no object is made per node.
   */
  private nodeAt = 0;
  private nodeItems: number[] | undefined;
  /** Offsets of the lines' starts, worked out when the first position is. */
  private lineStarts: number[] | undefined;

  constructor(
    private readonly text: string,
    private readonly firstLine: number,
  ) {
    this.length = text.length;
  }

  /** The whole document; `withPositions` false leaves `positions` empty (a caller can ask again when it needs them). */
  document(withPositions: boolean): SimpleFrontmatter | undefined {
    this.moveTo(0);
    // An empty frontmatter is not a mapping in YAML: let the full parser say so.
    if (this.indent !== 0 || keyEnd(this.text, this.at) === -1) outside();
    const positions = new Map<string, Position>();
    const data = this.map(0, withPositions ? positions : undefined);
    if (this.at <= this.length) outside();
    return { data, positions };
  }

  /** Make the first line at or after offset `from` (a line's start) that is neither blank nor a comment the current line. */
  private moveTo(from: number): void {
    const { text, length } = this;
    let at = from;
    while (at <= length) {
      let c = at;
      while (text.charCodeAt(c) === 32) c++;
      const ch = text.charCodeAt(c);
      if (c < length && ch !== 10 && ch !== 35) {
        this.at = at;
        this.indent = c - at;
        return;
      }
      const end = ch === 35 ? text.indexOf("\n", c) : c;
      if (end === -1 || end === length) break;
      at = end + 1;
    }
    this.at = length + 1;
    this.indent = -1;
  }

  /** The position of the character at `offset`, worked out from the lines' starts. */
  private pos(offset: number): Position {
    this.lineStarts ??= lineStarts(this.text);
    const starts = this.lineStarts;
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if ((starts[middle] as number) <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: this.firstLine + low, col: offset - (starts[low] as number) + 1 };
  }

  private setNode(at: number, items?: number[]): void {
    this.nodeAt = at;
    this.nodeItems = items;
  }

  /** A block mapping whose keys sit at `indent`, starting at the current line. */
  private map(indent: number, positions?: Map<string, Position>): Record<string, unknown> {
    const text = this.text;
    const wantItems = positions !== undefined;
    const out: Record<string, unknown> = {};
    while (this.indent === indent) {
      const c = this.at + indent;
      KEY_LINE.lastIndex = c;
      const simple = KEY_LINE.test(text);
      const matchEnd = KEY_LINE.lastIndex;
      if (!simple) {
        KEY.lastIndex = c;
        if (!KEY.test(text)) {
          // A sequence at the same indent belongs to an enclosing indentless sequence; anything else is outside.
          if (isSeqItem(text, c)) break;
          outside();
        }
      }
      const colon = simple ? text.indexOf(":", c) : KEY.lastIndex - 1;
      const key = text.slice(c, colon);
      if (colon - c > 1000 || Object.hasOwn(out, key)) outside();
      out[key] = simple ? this.lineValue(colon + 1, matchEnd, indent, wantItems) : this.value(colon + 1, indent, true, wantItems);
      if (positions) this.keep(positions, key, c);
    }
    // A deeper line where the next entry should be is outside the subset.
    if (this.indent > indent) outside();
    return out;
  }

  /** Record where the entry `key` (at offset `keyAt`) and its value start, from `nodeAt` and `nodeItems`. */
  private keep(positions: Map<string, Position>, key: string, keyAt: number): void {
    positions.set(key, this.pos(keyAt));
    const items = this.nodeItems;
    if (items) for (const [n, item] of items.entries()) positions.set(`${key}[${n}]`, this.pos(item));
    else positions.set(`${key}=`, this.pos(this.nodeAt));
  }

  /** A block sequence whose dashes sit at `indent`; `items` collects where each item starts. */
  private seq(indent: number, items?: number[]): unknown[] {
    const text = this.text;
    const value: unknown[] = [];
    while (this.indent === indent) {
      const c = this.at + indent;
      ITEM_LINE.lastIndex = c;
      if (ITEM_LINE.test(text)) value.push(this.lineValue(c + 1, ITEM_LINE.lastIndex, indent, false));
      else if (!isSeqItem(text, c)) {
        if (keyEnd(text, c) !== -1) break; // the next key of the map this indentless sequence belongs to
        outside();
      }
      // `- key: value`, read as the value would after finding its one-line plain form fails.
      else if (text.charCodeAt(c + 1) === 32 && keyEnd(text, c + 2) !== -1) value.push(this.inItem(c + 2, false));
      else value.push(this.value(c + 1, indent, false, false));
      items?.push(this.nodeAt);
    }
    if (this.indent > indent) outside();
    return value;
  }

  /**
   * The node after a `key:` or `-` indicator that ends just before offset
   * `after` of the current line. `parent` is the indent of the collection the
   * node belongs to; continuation lines must be deeper. `wantItems` asks for
   * the items' positions when the node is a sequence.
   */
  private value(after: number, parent: number, inMap: boolean, wantItems: boolean): unknown {
    const text = this.text;
    let c = after;
    while (text.charCodeAt(c) === 32) c++;
    const first = text.charCodeAt(c);
    if (first === 10 || c === this.length) {
      this.moveTo(c + 1);
      return this.nested(parent, inMap, c, false, wantItems);
    }
    // Most values are a plain scalar that starts with a character no other node can, and ends the line: one
    // native match reads it without the anchor, collection and comment checks. In a sequence such an item is no
    // `key: value` either, as it holds no `: ` and does not end with `:`.
    const kind = first < 128 ? PLAIN_FIRST[first] : 0;
    if (kind !== 0) {
      ONE_LINE_PLAIN.lastIndex = c;
      if (ONE_LINE_PLAIN.test(text)) {
        const end = ONE_LINE_PLAIN.lastIndex;
        // ... and no line below continues it: the next line is neither blank nor deeper than `parent`. It is read
        // here, as the next entry's line.
        let next = end + 1;
        while (text.charCodeAt(next) === 32) next++;
        const ch = text.charCodeAt(next);
        if (end === this.length || (next - end - 1 <= parent && next < this.length && ch !== 10)) {
          if (ch === 35 || end === this.length) this.moveTo(end + 1);
          else {
            this.at = end + 1;
            this.indent = next - end - 1;
          }
          this.nodeAt = c;
          this.nodeItems = undefined;
          const scalar = text.slice(c, end);
          return kind === PLAIN_TEXT ? scalar : resolvePlain(scalar);
        }
      }
      if (inMap || keyEnd(text, c) === -1) {
        this.setNode(c);
        return this.plain(c, parent);
      }
      return this.inItem(c, false);
    }
    return this.node(c, parent, inMap, wantItems);
  }

  /**
   * The value after the indicator (`key:` or `-`) ending at offset `after`, on a line KEY_LINE or ITEM_LINE
   * matched up to `matchEnd`: nothing, or a one-line plain scalar after one space unless deeper lines continue it.
   */
  private lineValue(after: number, matchEnd: number, parent: number, wantItems: boolean): unknown {
    const text = this.text;
    // The match went on to the next line's first character unless that line is blank, a comment or missing.
    const nextLine = matchEnd < this.length && text.charCodeAt(matchEnd) !== 10;
    if (text.charCodeAt(after) !== 32) {
      if (nextLine) {
        this.at = after + 1;
        this.indent = matchEnd - after - 1;
      } else this.moveTo(after + 1);
      return this.nested(parent, true, after, false, wantItems);
    }
    const c = after + 1;
    if (nextLine) {
      const end = text.indexOf("\n", c);
      const indent = matchEnd - end - 1;
      if (indent <= parent) {
        this.at = end + 1;
        this.indent = indent;
        this.nodeAt = c;
        this.nodeItems = undefined;
        const scalar = text.slice(c, end);
        return PLAIN_FIRST[text.charCodeAt(c)] === PLAIN_TEXT ? scalar : resolvePlain(scalar);
      }
    }
    // Continued on deeper lines, or followed by a blank line or a comment: read the general way.
    this.setNode(c);
    return this.plain(c, parent);
  }

  /** `- - x` or `- key: value`, a sequence (`isSeq`) or mapping starting inside an item of the current line at offset `c`: its indent is that column. */
  private inItem(c: number, isSeq: boolean): unknown {
    const indent = c - this.at;
    this.indent = indent;
    const value = isSeq ? this.seq(indent) : this.map(indent);
    this.setNode(c);
    return value;
  }

  /** Any node `value` does not read itself, starting at offset `c` (past the spaces after the indicator). */
  private node(c: number, parent: number, inMap: boolean, wantItems: boolean): unknown {
    const text = this.text;
    let anchor: string | undefined;
    ANCHOR.lastIndex = c;
    const a = text.charCodeAt(c) === 38 ? ANCHOR.exec(text) : null;
    if (a) {
      anchor = a[1] as string;
      c = ANCHOR.lastIndex;
      while (text.charCodeAt(c) === 32) c++;
    }
    let value: unknown;
    const ch = text.charCodeAt(c);
    if (c === this.length || ch === 10 || ch === 35) {
      this.moveTo(lineEnd(text, c) + 1);
      value = this.nested(parent, inMap, c, anchor !== undefined, wantItems);
    } else if (!inMap && anchor === undefined && (isSeqItem(text, c) || keyEnd(text, c) !== -1)) {
      value = this.inItem(c, isSeqItem(text, c));
    } else {
      value = this.inlineValue(c, parent, anchor !== undefined, wantItems);
    }
    if (anchor !== undefined) {
      // A name anchored twice resolves by where each anchor starts, not ends: left to the full parser.
      if (this.anchors.has(anchor)) outside();
      this.anchors.set(anchor, { value, uses: 0 });
    }
    return value;
  }

  /**
   * What follows an indicator with nothing after it on its line (nothing from offset `emptyAt`), the cursor being
   * on the next line that is neither blank nor a comment: a deeper collection, an indentless sequence, or null.
   */
  private nested(parent: number, inMap: boolean, emptyAt: number, anchored: boolean, wantItems: boolean): unknown {
    const start = this.at;
    const indent = this.indent;
    const aliasesBefore = this.aliasesSeen;
    const items = wantItems ? [] : undefined;
    let value: unknown;
    if (indent >= parent && isSeqItem(this.text, start + indent) && (indent > parent || inMap)) value = this.seq(indent, items);
    // A deeper line that is no `key:` is a scalar on the next line: the map refuses it.
    else if (indent > parent) value = this.map(indent);
    else {
      this.setNode(emptyAt);
      return null;
    }
    // An anchored collection holding aliases is left to the full parser (its alias-count accounting).
    if (anchored && this.aliasesSeen !== aliasesBefore) outside();
    this.setNode(start + indent, Array.isArray(value) ? items : undefined);
    return value;
  }

  /** A scalar, alias or one-line flow sequence starting at offset `c` of the current line. */
  private inlineValue(c: number, parent: number, anchored: boolean, wantItems: boolean): unknown {
    const text = this.text;
    this.setNode(c);
    const first = text[c];
    if (first === "*") {
      ALIAS.lastIndex = c;
      if (!ALIAS.test(text) || anchored) outside();
      const end = ALIAS.lastIndex;
      let nameEnd = end;
      while (text.charCodeAt(nameEnd - 1) === 32) nameEnd--;
      const target = this.anchors.get(text.slice(c + 1, nameEnd));
      if (!target || ++target.uses > MAX_ALIASES_PER_ANCHOR) outside();
      this.aliasesSeen++;
      this.moveTo(end + 1);
      return target.value;
    }
    if (first === "[") {
      const at = this.at;
      const end = lineEnd(text, c);
      const items = wantItems ? ([] as number[]) : undefined;
      const value = flowSequence(text.slice(at, end), c - at, at, items);
      this.moveTo(end + 1);
      this.setNode(c, items);
      return value;
    }
    if (first === "{") {
      EMPTY_MAP.lastIndex = c;
      if (!EMPTY_MAP.test(text)) outside();
      this.moveTo(EMPTY_MAP.lastIndex + 1);
      return {};
    }
    if (first === "|" || first === ">") return this.blockScalar(c, parent);
    if (first === "'" || first === '"') return this.quoted(c, parent);
    PLAIN_START.lastIndex = c;
    if (PLAIN_START.test(text)) outside();
    return this.plain(c, parent);
  }

  /** A plain scalar starting at offset `c` of the current line, with its continuation lines folded. */
  private plain(c: number, parent: number): unknown {
    const text = this.text;
    const at = this.at;
    const end = lineEnd(text, c);
    const line = text.slice(at, end);
    const hash = line.indexOf(" #", c - at);
    const scalar = line.slice(c - at, plainEnd(line, c - at, hash));
    const next = end + 1;
    if (hash === -1 && end < this.length) {
      // Most plain scalars are one line: the next line is neither blank nor deeper.
      let n = next;
      while (text.charCodeAt(n) === 32) n++;
      const ch = text.charCodeAt(n);
      if (n - next > parent || n === this.length || ch === 10) return this.fold(scalar, parent, next);
    }
    this.moveTo(next);
    return resolvePlain(scalar);
  }

  /** The rest of a plain scalar whose first line is `scalar`, from the line starting at `from`: its continuation lines folded. */
  private fold(scalar: string, parent: number, from: number): unknown {
    const { text, length } = this;
    let at = from;
    let multiLine = false;
    let breaks = 0;
    while (at <= length) {
      const end = lineEnd(text, at);
      let c = at;
      while (text.charCodeAt(c) === 32) c++;
      if (c === end) {
        breaks++;
        at = end + 1;
        continue;
      }
      if (c - at <= parent || text.charCodeAt(c) === 35) break;
      PLAIN_START.lastIndex = c;
      if (PLAIN_START.test(text)) outside();
      const line = text.slice(at, end);
      const indent = c - at;
      const hash = line.indexOf(" #", indent);
      scalar += breaks > 0 ? "\n".repeat(breaks) : " ";
      scalar += line.slice(indent, plainEnd(line, indent, hash));
      breaks = 0;
      multiLine = true;
      at = end + 1;
      if (hash !== -1) break;
    }
    this.moveTo(at);
    return multiLine ? scalar : resolvePlain(scalar);
  }

  /** A single- or double-quoted scalar starting at offset `c` of the current line, possibly over several lines. */
  private quoted(c: number, parent: number): string {
    const text = this.text;
    const quote = text[c] as string;
    let at = this.at;
    let end = lineEnd(text, c);
    const line = text.slice(at, end);
    const close = findClosingQuote(line, c - at + 1, quote);
    // Most quoted scalars close on their own line: read those without collecting their lines.
    if (close !== -1) {
      LINE_REST.lastIndex = close + 1;
      if (!LINE_REST.test(line)) outside();
      this.moveTo(end + 1);
      return unquote(line.slice(c - at + 1, close), quote);
    }
    const pieces: string[] = [];
    let lineText = line.slice(c - at + 1);
    for (;;) {
      if (quote === '"' && ESCAPED_BREAK.test(lineText)) outside();
      pieces.push(lineText);
      at = end + 1;
      if (at > this.length) outside();
      end = lineEnd(text, at);
      let indent = 0;
      while (text.charCodeAt(at + indent) === 32) indent++;
      if (indent <= parent && at + indent < end) outside();
      lineText = text.slice(at + indent, end);
      const closing = findClosingQuote(lineText, 0, quote);
      if (closing !== -1) {
        pieces.push(lineText.slice(0, closing));
        LINE_REST.lastIndex = closing + 1;
        if (!LINE_REST.test(lineText)) outside();
        break;
      }
    }
    this.moveTo(end + 1);
    return foldQuoted(pieces, quote);
  }

  /** A literal (`|`) or folded (`>`) block scalar with clip, strip (`-`) or keep (`+`) chomping, its header at offset `c`. */
  private blockScalar(c: number, parent: number): string {
    const { text, length } = this;
    BLOCK_HEADER.lastIndex = c;
    const m = BLOCK_HEADER.exec(text);
    if (!m) outside();
    const literal = m[1] === "|";
    const chomp = m[2];
    let at = BLOCK_HEADER.lastIndex + 1;
    let contentIndent = -1;
    const body: string[] = [];
    while (at <= length) {
      const end = lineEnd(text, at);
      let indent = 0;
      while (text.charCodeAt(at + indent) === 32) indent++;
      if (at + indent === end) {
        // A blank line holding spaces past the content indent keeps them (or is an error): left to the full parser.
        if (indent > 0 && (contentIndent === -1 || indent > contentIndent)) outside();
        body.push("");
        at = end + 1;
        continue;
      }
      if (contentIndent === -1) {
        if (indent <= parent) break;
        contentIndent = indent;
      }
      if (indent < contentIndent) break;
      if (indent > contentIndent) outside(); // more-indented lines
      body.push(text.slice(at + contentIndent, end));
      at = end + 1;
    }
    // The document's last line has no line break of its own: when blank, it adds none to the scalar.
    if (at > length && body[body.length - 1] === "") body.pop();
    this.moveTo(at);
    let trailing = 0;
    while (body.length > 0 && body[body.length - 1] === "") {
      body.pop();
      trailing++;
    }
    // A scalar with no content is left to the full parser; trailing blank lines count only when kept (`+`).
    if (contentIndent === -1 || body.length === 0) outside();
    let folded: string;
    if (literal) folded = body.join("\n");
    else {
      // Leading blank lines stay line breaks; between two lines of text a single break folds to a space.
      let n = 0;
      while (body[n] === "") n++;
      folded = "\n".repeat(n) + (body[n] as string);
      let breaks = 0;
      for (n++; n < body.length; n++) {
        const piece = body[n] as string;
        if (piece === "") {
          breaks++;
          continue;
        }
        folded += breaks > 0 ? "\n".repeat(breaks) : " ";
        folded += piece;
        breaks = 0;
      }
    }
    if (chomp === "-") return folded;
    if (chomp === "+") return `${folded}\n${"\n".repeat(trailing)}`;
    return `${folded}\n`;
  }
}

/** The offsets at which the lines of `text` start. */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) starts.push(at + 1);
  return starts;
}

/** Offset of the line feed ending the line that holds offset `from`, or the text's length. */
function lineEnd(text: string, from: number): number {
  const end = text.indexOf("\n", from);
  return end === -1 ? text.length : end;
}

/**
 * Where the plain key starting at offset `from` ends (the offset of its `:`),
 * or -1 when there is no `key:` there: `[A-Za-z_][A-Za-z0-9_.-]*` then `:`
 * followed by a space or the line's end. One sticky regular expression: it
 * runs once per frontmatter line, and in a short-lived process most lines are
 * read before a hand-written loop would be compiled.
 */
function keyEnd(text: string, from: number): number {
  KEY.lastIndex = from;
  return KEY.test(text) ? KEY.lastIndex - 1 : -1;
}

/** Whether a block sequence item (`-` then a space or the line's end) starts at offset `c`. */
function isSeqItem(text: string, c: number): boolean {
  if (text.charCodeAt(c) !== 45) return false;
  const next = text.charCodeAt(c + 1);
  return next === 32 || next === 10 || c + 1 === text.length;
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
 * collects where each item starts, as offsets into the text, `lineAt` being the line's.
 */
function flowSequence(line: string, c: number, lineAt: number, items?: number[]): unknown[] {
  const close = line.lastIndexOf("]");
  LINE_REST.lastIndex = close + 1;
  if (close < c || !LINE_REST.test(line)) outside();
  let k = c + 1;
  while (line[k] === " ") k++;
  if (k === close) return [];
  const out: unknown[] = [];
  for (;;) {
    while (line[k] === " ") k++;
    items?.push(lineAt + k);
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

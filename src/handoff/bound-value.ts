/**
 * How much of one JSON-like value (a record as written, a field's old or new
 * value) is shown: `chars` in all, each string by at most `stringChars`,
 * each array or object by its first `items`, nested `depth` levels deep. A
 * string or key counts its length and one more, any other value its text
 * and one more, a list or object two: its JSON is at most six times that
 * (the most a character grows escaped).
 */
export interface ValueBudget {
  chars: number;
  stringChars: number;
  items: number;
  depth: number;
}

/** A value as shown: the bounded copy, whether anything was left out, and its size as the budget counts it. */
export interface BoundedValue {
  value: unknown;
  cut: boolean;
  size: number;
}

/** The most a cut string's mark adds to what a value is counted. */
export const CUT_MARK_CHARS = 48;

/** What a cut string ends with: how many of its characters are not shown (said in words, so no one takes a part for all of it). */
export function cutMark(notShown: number): string {
  return `… [${notShown} more characters not shown]`;
}

/**
 * A copy of `value` within `budget`, in its order: a string over its share is
 * shown by its head and ends with cutMark; the items or members past the
 * budget are left out (the copy is then `cut`); what nests deeper than
 * `depth` is shown as a cut string. Visits only what it keeps, so its cost is
 * bounded by the budget, not by the value (an object's keys are listed once).
 * The size counted is at most `chars` plus two CUT_MARK_CHARS (a key and its value cut when nothing is left).
 */
export function boundValue(value: unknown, budget: ValueBudget): BoundedValue {
  const state: BoundState = { left: budget.chars, cut: false };
  const out = boundValueWithin(value, budget, state);
  return { value: out, cut: state.cut, size: budget.chars - state.left };
}

/** What is left of a budget shared by several values (`left` may end below 0 by one cut mark), and whether any was cut. */
export interface BoundState {
  left: number;
  cut: boolean;
}

/** boundValue spending a budget shared with other values (a record's fields, then its source). */
export function boundValueWithin(value: unknown, budget: Omit<ValueBudget, "chars">, state: BoundState): unknown {
  return walk(value, budget, 0, state);
}

function walk(value: unknown, budget: Omit<ValueBudget, "chars">, depth: number, state: BoundState): unknown {
  if (typeof value === "string") return boundStringWithin(value, budget.stringChars, state);
  if (value === null || typeof value !== "object") {
    state.left -= String(value).length + 1;
    return value;
  }
  if (depth >= budget.depth) {
    state.cut = true;
    const mark = `… [${Array.isArray(value) ? "a list" : "an object"} not shown]`;
    state.left -= mark.length + 1;
    return mark;
  }
  state.left -= 2;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const item of value) {
      if (out.length >= budget.items || state.left <= 0) {
        state.cut = true;
        break;
      }
      out.push(walk(item, budget, depth + 1, state));
    }
    return out;
  }
  const out: Record<string, unknown> = {};
  let kept = 0;
  for (const key of Object.keys(value)) {
    if (kept >= budget.items || state.left <= key.length) {
      state.cut = true;
      break;
    }
    const shownKey = boundStringWithin(key, budget.stringChars, state);
    // A key of the agent's (`__proto__` included) is an own property of the copy, never its prototype.
    Object.defineProperty(out, shownKey, {
      value: walk((value as Record<string, unknown>)[key], budget, depth + 1, state),
      enumerable: true,
      writable: true,
      configurable: true,
    });
    kept++;
  }
  return out;
}

/**
 * A string within `stringChars` and what is left of the budget: all of it,
 * or its head (whole characters: a surrogate pair is never split) and
 * cutMark — only the mark once nothing is left. Never dropped, so a field
 * that must be text stays text.
 */
export function boundStringWithin(s: string, stringChars: number, state: BoundState): string {
  const room = Math.min(stringChars, state.left);
  if (s.length <= room) {
    state.left -= s.length + 1;
    return s;
  }
  state.cut = true;
  let keep = Math.max(0, room);
  const lead = s.charCodeAt(keep - 1);
  if (keep > 0 && lead >= 0xd800 && lead <= 0xdbff) keep--;
  const shown = `${s.slice(0, keep)}${cutMark(s.length - keep)}`;
  state.left -= shown.length + 1;
  return shown;
}

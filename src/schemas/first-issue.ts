import "./zod-setup.js";
import { z } from "zod/mini";
import { fastParse } from "./lazy-schema.js";

/** One issue as zod reports it: where (a path of keys and indexes) and what, in zod's words. */
export interface FirstIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  /** The keys an object must not have (code `unrecognized_keys`), at most ten. */
  keys?: string[];
}

/** A parse that stops at the first issue: zod's output, or that one issue. */
export type FirstIssueResult<T> = { success: true; data: T } | { success: false; error: { issues: [FirstIssue] } };

// biome-ignore lint/suspicious/noExplicitAny: zod's internal definitions, walked by their `type`
type AnyDef = any;
interface Walkable {
  _zod: { def: AnyDef };
  safeParse(input: unknown): { success: boolean; data?: unknown; error?: { issues: FirstIssue[] } };
}

/**
 * Parse `input` with `schema` and report at most one issue: the first, in
 * document order, as zod would word it.
 *
 * zod collects every issue of a refused input, and merges a child's issues
 * into its parent with `push(...issues)`: an array of 40,000 bad elements
 * gives a property hundreds of thousands of issues, whose spread overflows
 * the stack (`handlePropertyResult` in zod's object parser), and 3 million
 * make millions of issue objects, past the heap. So the fast validator
 * answers first (no issue objects at all); when it does not accept, this
 * walks the schema beside the input — objects key by key, arrays element by
 * element, records entry by entry, the options of a union — and lets zod
 * parse only the leaves, stopping at the first that fails. Each part of the
 * input is visited once, so the cost is linear and nothing is allocated per
 * bad element.
 */
export function safeParseFirstIssue<S extends z.ZodMiniType>(schema: S, input: unknown): FirstIssueResult<z.infer<S>> {
  const result = safeParseFewIssues(schema, input, 1);
  return result.success ? result : { success: false, error: { issues: [result.error.issues[0] as FirstIssue] } };
}

/** `safeParseFirstIssue`, going on past a bad part until `max` issues are found (a report that lists a few). */
export function safeParseFewIssues<S extends z.ZodMiniType>(
  schema: S,
  input: unknown,
  max: number,
): { success: true; data: z.infer<S> } | { success: false; error: { issues: FirstIssue[] } } {
  type T = z.infer<S>;
  const fast = fastParse(schema, input);
  if (fast !== undefined) return { success: true, data: fast.data as T };
  const found: FirstIssue[] = [];
  collect(schema as unknown as Walkable, input, [], { found, max: Math.max(1, max) });
  if (found.length > 0) return { success: false, error: { issues: found } };
  // Nothing in it fails part by part: zod's answer over the whole is its output (or an issue of the whole alone).
  const whole = (schema as unknown as Walkable).safeParse(input);
  if (whole.success) return { success: true, data: whole.data as T };
  const first = whole.error?.issues[0] ?? { code: "custom", path: [], message: "Invalid input" };
  return { success: false, error: { issues: [first] } };
}

/** Where issues are gathered, and how many are enough. */
interface Found {
  found: FirstIssue[];
  max: number;
}

/** Gather the issues of `value` against `schema`, with `at` before their paths; true once enough are found. */
function collect(schema: Walkable, value: unknown, at: PropertyKey[], into: Found): boolean {
  const def = schema._zod.def;
  switch (def.type) {
    case "optional":
      return value === undefined ? false : collect(def.innerType, value, at, into);
    case "nullable":
      return value === null ? false : collect(def.innerType, value, at, into);
    case "lazy":
      return collect(def.getter(), value, at, into);
    case "object":
      return isPlainObject(value) ? collectObject(schema, def, value, at, into) : leaf(schema, value, at, into);
    case "array": {
      if (!Array.isArray(value)) return leaf(schema, value, at, into);
      const before = into.found.length;
      for (let i = 0; i < value.length; i++) if (collect(def.element, value[i], [...at, i], into)) return true;
      return into.found.length === before && ownChecks(schema, def, value, at, into);
    }
    case "record": {
      if (!isPlainObject(value)) return leaf(schema, value, at, into);
      const before = into.found.length;
      for (const key of Object.keys(value)) {
        if (leaf(def.keyType, key, [...at, key], into)) return true;
        if (collect(def.valueType, value[key], [...at, key], into)) return true;
      }
      return into.found.length === before && ownChecks(schema, def, value, at, into);
    }
    case "union": {
      // A discriminated union is judged as zod judges it: by the option its discriminator names, and with none named,
      // zod's own issue (the union's own message), which zod gives without looking past the discriminator.
      if (def.discriminator !== undefined && !def.unionFallback) {
        const tag = isPlainObject(value) ? value[def.discriminator] : undefined;
        const chosen = isPlainObject(value)
          ? (def.options as Walkable[]).find((o) => (o._zod as AnyDef).propValues?.[def.discriminator]?.has(tag))
          : undefined;
        return chosen === undefined ? leaf(schema, value, at, into) : collect(chosen, value, at, into);
      }
      // Accepted by one option: accepted. Else the issue that got deepest into the value says most.
      let best: FirstIssue | undefined;
      for (const option of def.options as Walkable[]) {
        const tried: Found = { found: [], max: 1 };
        collect(option, value, at, tried);
        const issue = tried.found[0];
        if (issue === undefined) return false;
        if (best === undefined || issue.path.length > best.path.length) best = issue;
      }
      return add(best as FirstIssue, into);
    }
    default:
      return leaf(schema, value, at, into);
  }
}

function collectObject(schema: Walkable, def: AnyDef, value: Record<string, unknown>, at: PropertyKey[], into: Found): boolean {
  const before = into.found.length;
  const shape = def.shape as Record<string, Walkable>;
  for (const key of Object.keys(shape))
    if (collect(shape[key] as Walkable, Object.hasOwn(value, key) ? value[key] : undefined, [...at, key], into)) return true;
  const catchall = def.catchall as Walkable | undefined;
  if (catchall !== undefined) {
    const extra = Object.keys(value).filter((k) => !Object.hasOwn(shape, k));
    if (extra.length > 0 && catchall._zod.def.type === "never") {
      const keys = extra.slice(0, 10);
      const more = extra.length > keys.length ? ", …" : "";
      const message = `Unrecognized key${keys.length > 1 ? "s" : ""}: ${keys.map((k) => JSON.stringify(k)).join(", ")}${more}`;
      if (add({ code: "unrecognized_keys", path: at, keys, message }, into)) return true;
    } else for (const key of extra) if (collect(catchall, value[key], [...at, key], into)) return true;
  }
  return into.found.length === before && ownChecks(schema, def, value, at, into);
}

/** Checks on a container itself (an array's length, a refinement of an object), once its parts pass. */
function ownChecks(schema: Walkable, def: AnyDef, value: unknown, at: PropertyKey[], into: Found): boolean {
  const checks = def.checks as unknown[] | undefined;
  if (checks === undefined || checks.length === 0) return false;
  // The same checks on a container of anything: only the container's own issues, without parsing the parts again.
  let bare = BARE.get(schema);
  if (bare === undefined) {
    const base =
      def.type === "array" ? z.array(z.unknown()) : def.type === "record" ? z.record(z.string(), z.unknown()) : z.looseObject({});
    bare = (base as unknown as { check(...c: unknown[]): Walkable }).check(...checks);
    BARE.set(schema, bare);
  }
  return leaf(bare, value, at, into);
}
const BARE = new WeakMap<object, Walkable>();

/** zod's first issue of a part it parses whole (a string, a number, a part the walk does not open). */
function leaf(schema: Walkable, value: unknown, at: PropertyKey[], into: Found): boolean {
  const result = schema.safeParse(value);
  if (result.success) return false;
  const issue = result.error?.issues[0];
  return add(
    issue === undefined
      ? { code: "custom", path: at, message: "Invalid input" }
      : { code: issue.code, path: [...at, ...issue.path], message: issue.message },
    into,
  );
}

function add(issue: FirstIssue, into: Found): boolean {
  into.found.push(issue);
  return into.found.length >= into.max;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

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
  type T = z.infer<S>;
  const fast = fastParse(schema, input);
  if (fast !== undefined) return { success: true, data: fast.data as T };
  const issue = firstIssueOf(schema as unknown as Walkable, input, []);
  if (issue !== undefined) return { success: false, error: { issues: [issue] } };
  // Nothing in it fails part by part: zod's answer over the whole is its output (or an issue of the whole alone).
  const whole = (schema as unknown as Walkable).safeParse(input);
  if (whole.success) return { success: true, data: whole.data as T };
  const first = whole.error?.issues[0] ?? { code: "custom", path: [], message: "Invalid input" };
  return { success: false, error: { issues: [first] } };
}

/** The first issue of `value` against `schema` (undefined when it passes), with `at` before its path. */
function firstIssueOf(schema: Walkable, value: unknown, at: PropertyKey[]): FirstIssue | undefined {
  const def = schema._zod.def;
  switch (def.type) {
    case "optional":
      return value === undefined ? undefined : firstIssueOf(def.innerType, value, at);
    case "nullable":
      return value === null ? undefined : firstIssueOf(def.innerType, value, at);
    case "lazy":
      return firstIssueOf(def.getter(), value, at);
    case "object":
      return isPlainObject(value) ? objectIssue(schema, def, value, at) : leafIssue(schema, value, at);
    case "array": {
      if (!Array.isArray(value)) return leafIssue(schema, value, at);
      for (let i = 0; i < value.length; i++) {
        const issue = firstIssueOf(def.element, value[i], [...at, i]);
        if (issue !== undefined) return issue;
      }
      return ownChecksIssue(schema, def, value, at);
    }
    case "record": {
      if (!isPlainObject(value)) return leafIssue(schema, value, at);
      for (const key of Object.keys(value)) {
        const keyIssue = leafIssue(def.keyType, key, [...at, key]);
        if (keyIssue !== undefined) return keyIssue;
        const issue = firstIssueOf(def.valueType, value[key], [...at, key]);
        if (issue !== undefined) return issue;
      }
      return ownChecksIssue(schema, def, value, at);
    }
    case "union": {
      // Accepted by one option: accepted. Else the issue that got deepest into the value says most.
      let best: FirstIssue | undefined;
      for (const option of def.options as Walkable[]) {
        const issue = firstIssueOf(option, value, at);
        if (issue === undefined) return undefined;
        if (best === undefined || issue.path.length > best.path.length) best = issue;
      }
      return best;
    }
    default:
      return leafIssue(schema, value, at);
  }
}

function objectIssue(schema: Walkable, def: AnyDef, value: Record<string, unknown>, at: PropertyKey[]): FirstIssue | undefined {
  const shape = def.shape as Record<string, Walkable>;
  for (const key of Object.keys(shape)) {
    const issue = firstIssueOf(shape[key] as Walkable, Object.hasOwn(value, key) ? value[key] : undefined, [...at, key]);
    if (issue !== undefined) return issue;
  }
  const catchall = def.catchall as Walkable | undefined;
  if (catchall !== undefined) {
    const extra = Object.keys(value).filter((k) => !Object.hasOwn(shape, k));
    if (extra.length > 0 && catchall._zod.def.type === "never") {
      const keys = extra.slice(0, 10);
      return {
        code: "unrecognized_keys",
        path: at,
        keys,
        message: `Unrecognized key${keys.length > 1 ? "s" : ""}: ${keys.map((k) => JSON.stringify(k)).join(", ")}${extra.length > keys.length ? ", …" : ""}`,
      };
    }
    for (const key of extra) {
      const issue = firstIssueOf(catchall, value[key], [...at, key]);
      if (issue !== undefined) return issue;
    }
  }
  return ownChecksIssue(schema, def, value, at);
}

/** Checks on a container itself (an array's length, a refinement of an object), once its parts pass. */
function ownChecksIssue(schema: Walkable, def: AnyDef, value: unknown, at: PropertyKey[]): FirstIssue | undefined {
  const checks = def.checks as unknown[] | undefined;
  if (checks === undefined || checks.length === 0) return undefined;
  // The same checks on a container of anything: only the container's own issues, without parsing the parts again.
  let bare = BARE.get(schema);
  if (bare === undefined) {
    const base =
      def.type === "array" ? z.array(z.unknown()) : def.type === "record" ? z.record(z.string(), z.unknown()) : z.looseObject({});
    bare = (base as unknown as { check(...c: unknown[]): Walkable }).check(...checks);
    BARE.set(schema, bare);
  }
  return leafIssue(bare, value, at);
}
const BARE = new WeakMap<object, Walkable>();

function leafIssue(schema: Walkable, value: unknown, at: PropertyKey[]): FirstIssue | undefined {
  const result = schema.safeParse(value);
  if (result.success) return undefined;
  const issue = result.error?.issues[0];
  if (issue === undefined) return { code: "custom", path: at, message: "Invalid input" };
  return { code: issue.code, path: [...at, ...issue.path], message: issue.message };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

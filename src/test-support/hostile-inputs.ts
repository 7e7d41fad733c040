/**
 * Hostile inputs for the entry points' property tests: a run file, handoff
 * record, twinlock.yaml, hook stdin or request body that is huge in one
 * dimension (bytes over the budget, one array over the element limit,
 * nesting over the depth limit, one long string, many empty elements).
 * fast-check picks the size class and where the anomaly sits; the large
 * parts are made once per size class and reused, so a property costs the
 * write of its input, not the making of it.
 */
import fc from "fast-check";
import { BUDGETS } from "../input/budgets.js";

/** What is huge about an input. */
export type Anomaly = "bytes" | "elements" | "depth" | "long-string" | "empty-elements";

/** One hostile JSON text and what is wrong with it. */
export interface HostileJson {
  anomaly: Anomaly;
  /** Where in the document the anomaly sits (a key, for the report of a failure). */
  at: string;
  text: string;
}

const cache = new Map<string, string>();
/** A large part, made once per size class. */
function part(key: string, make: () => string): string {
  let v = cache.get(key);
  if (v === undefined) {
    v = make();
    cache.set(key, v);
  }
  return v;
}

/** The JSON value of one anomaly, for an input with `bytes`/`depth`/`elements` limits. */
function anomalyValue(anomaly: Anomaly, limits: { bytes: number; depth: number; elements: number }, open: "[" | "{"): string {
  switch (anomaly) {
    case "bytes":
      return part(`bytes:${limits.bytes}`, () => `"${"a".repeat(limits.bytes + 1)}"`);
    case "long-string":
      // Within the byte budget: what reads it gets past the scan and must refuse it by shape.
      return part(`long:${limits.bytes}`, () => `"${"\\u0000".repeat(Math.floor(limits.bytes / 12))}"`);
    case "elements":
      return part(`elements:${limits.elements}:${open}`, () =>
        open === "["
          ? `[${"{},".repeat(limits.elements)}{}]`
          : `{${Array.from({ length: limits.elements + 1 }, (_, i) => `"k${i}":0`).join(",")}}`,
      );
    case "empty-elements":
      return part(`empty:${limits.elements}`, () => `[${"{},".repeat(limits.elements - 2)}{}]`);
    case "depth":
      return part(`depth:${limits.depth}:${open}`, () => {
        const n = limits.depth * 8;
        return open === "[" ? `${"[".repeat(n)}0${"]".repeat(n)}` : `${'{"k":'.repeat(n)}0${"}".repeat(n)}`;
      });
  }
}

/** A hostile input as fast-check reports a counterexample: what and where, never its megabytes. */
function described<T extends { anomaly: Anomaly; text: string; at?: string }>(h: T): T {
  Object.defineProperty(h, fc.toStringMethod, {
    value: () => `${h.anomaly}${h.at ? ` at ${h.at}` : ""} (${h.text.length.toLocaleString("en-US")} characters)`,
  });
  return h;
}

const ANOMALIES: Anomaly[] = ["bytes", "elements", "depth", "long-string", "empty-elements"];

/** JSON text shaped like `skeleton` with one anomaly put in at one of `keys` (replacing or adding that key). */
export function hostileJson(
  limits: { bytes: number; depth: number; elements: number },
  skeleton: Record<string, unknown>,
  keys: readonly string[],
  anomalies: readonly Anomaly[] = ANOMALIES,
): fc.Arbitrary<HostileJson> {
  return fc
    .record({ anomaly: fc.constantFrom(...anomalies), at: fc.constantFrom(...keys), open: fc.constantFrom<"[" | "{">("[", "{") })
    .map(({ anomaly, at, open }) => {
      const rest = Object.fromEntries(Object.entries(skeleton).filter(([k]) => k !== at));
      const head = JSON.stringify(rest).slice(0, -1);
      const sep = head.length > 1 ? "," : "";
      return described({ anomaly, at, text: `${head}${sep}${JSON.stringify(at)}:${anomalyValue(anomaly, limits, open)}}` });
    });
}

/** A run file huge in one dimension, the anomaly at the top or in its events. */
export function hostileRunFile(): fc.Arbitrary<HostileJson> {
  const skeleton = { format: "twinlock-run/2", revision: 1, head: `sha256:${"0".repeat(64)}`, state: {}, events: [] };
  return hostileJson(BUDGETS.runFile, skeleton, ["events", "state", "head", "format", "x"]);
}

/** A handoff record (action_plan.json or another) huge in one dimension. */
export function hostileRecord(): fc.Arbitrary<HostileJson> {
  const skeleton = { format: "action-plan/1", actions: [], evidence: [], summary: "" };
  return hostileJson(BUDGETS.handoffRecord, skeleton, ["actions", "evidence", "summary", "x"]);
}

/** twinlock.yaml over its budget: bytes, a block list or flow list over the entries limit, or deep flow nesting. */
export function hostileSuiteConfig(): fc.Arbitrary<{ anomaly: Anomaly; text: string }> {
  const b = BUDGETS.suiteConfig;
  return fc.constantFrom<Anomaly>("bytes", "elements", "depth", "empty-elements").map((anomaly) =>
    described({
      anomaly,
      text: part(`yaml:${anomaly}`, () => {
        if (anomaly === "bytes") return `suite_id: x\n# ${"a".repeat(b.bytes)}\n`;
        if (anomaly === "elements") return `revoked:\n${"  - x\n".repeat(b.elements + 1)}`;
        if (anomaly === "empty-elements") return `revoked: [${"{},".repeat(b.elements)}{}]\n`;
        return `revoked: ${"[".repeat(b.depth * 8)}${"]".repeat(b.depth * 8)}\n`;
      }),
    }),
  );
}

/** Hook stdin: a pre-tool-use Write call whose tool input is huge in one dimension. */
export function hostileHookInput(): fc.Arbitrary<HostileJson> {
  const skeleton = {
    session_id: "s-1",
    cwd: "/tmp",
    hook_event_name: "PreToolUse",
    tool_name: "Write",
    tool_input: { file_path: "/tmp/x", content: "x" },
  };
  return hostileJson(BUDGETS.hookInput, skeleton, ["tool_input", "cwd", "session_id", "x"]);
}

/**
 * A request body (API or MCP arguments) shaped like `fields`, huge in one
 * dimension at one of `keys` (or at an extra member "x"); `maxBodyBytes` is
 * the server's request body limit, which the "bytes" anomaly passes by one.
 */
export function hostileBody(
  maxBodyBytes: number,
  fields: Record<string, unknown>,
  extraKey = true,
  keys: readonly string[] = Object.keys(fields),
): fc.Arbitrary<HostileJson> {
  // Depth and elements as the run file's: a body may be no deeper or wider than what it could be recorded into.
  return hostileJson(
    { ...BUDGETS.runFile, bytes: maxBodyBytes },
    fields,
    [...keys, ...(extraKey ? ["x"] : [])],
    ["bytes", "elements", "depth", "long-string"],
  );
}

import fc from "fast-check";

/** One change near a sample: the value at the path `at` replaced, dropped or set to undefined, or `key` added to it. */
export interface Change {
  at: Array<string | number>;
  how: "replace" | "drop" | "add" | "undefined";
  value: unknown;
  /** The key an "add" sets (default "extra"); set as an own property even when it is "__proto__". */
  key?: string;
}

/**
 * A copy of `sample` with `changes` made in turn. Every value put in is a
 * copy of its own, as JSON.parse (where the parsed inputs come from) makes
 * them: no two places share an object, so no change reaches another place
 * and no value is ever cyclic. (Putting fast-check's one `{}` in as it was
 * let a later change add it to itself, a value no JSON text can give, and
 * left it changed for the runs after: fast-check seed 356685377 of
 * src/schemas/first-issue.test.ts.)
 */
export function withChanges(sample: unknown, changes: readonly Change[]): unknown {
  const copy = structuredClone(sample);
  for (const c of changes) {
    let parent: Record<string | number, unknown> | undefined;
    let key: string | number | undefined;
    let node: unknown = copy;
    for (const step of c.at) {
      if (node === null || typeof node !== "object") break;
      parent = node as Record<string | number, unknown>;
      key = step;
      node = parent[step];
    }
    if (c.how === "add" && node !== null && typeof node === "object" && !Array.isArray(node)) {
      const value = structuredClone(c.value);
      Object.defineProperty(node, c.key ?? "extra", { value, enumerable: true, configurable: true, writable: true });
    } else if (parent && key !== undefined) {
      if (c.how === "drop") delete parent[key];
      else parent[key] = c.how === "undefined" ? undefined : structuredClone(c.value);
    }
  }
  return copy;
}

/**
 * Random values near `sample`: one to three changes (withChanges) at any of
 * its paths, each putting in a `leaf`, and adding one of `keys`.
 */
export function valuesNear(sample: unknown, leaf: fc.Arbitrary<unknown>, keys: readonly string[] = ["extra"]): fc.Arbitrary<unknown> {
  const paths: Array<Array<string | number>> = [];
  const walk = (v: unknown, at: Array<string | number>) => {
    paths.push(at);
    if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, [...at, i]);
    else if (v !== null && typeof v === "object") for (const [k, x] of Object.entries(v)) walk(x, [...at, k]);
  };
  walk(sample, []);
  const change: fc.Arbitrary<Change> = fc.record({
    at: fc.constantFrom(...paths),
    how: fc.constantFrom("replace", "drop", "add", "undefined"),
    value: leaf,
    key: fc.constantFrom(...keys),
  });
  return fc.array(change, { minLength: 1, maxLength: 3 }).map((changes) => withChanges(sample, changes));
}

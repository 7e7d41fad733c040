import { FAST_VALIDATORS, NO, NOT_SURE } from "./fast-validators.generated.js";

/**
 * Every schema made with `lazySchema`, by name: the proxy the module exports
 * (what src/schemas/generate-fast-validators.ts walks, as other schemas are
 * built from it), and the zod schema itself, built on call (what the tests
 * hold each fast validator to: the proxy would answer with the validator).
 */
export const LAZY_SCHEMAS = new Map<string, { schema: object; zod: () => object }>();

/**
 * A zod schema that is built on first use, with a fast path for parsing.
 *
 * A command lives a tenth of a second and reads a few files, yet building the
 * gate's schemas (the run file's alone is some 300 zod objects) took longer
 * than parsing with them. So a module gives each schema it exports to this
 * function with the code that builds it; the schema is made only when
 * something other than parsing needs it (another schema built from it, the
 * published JSON Schemas, an error message). `parse` and `safeParse` first
 * ask the validator generated from this very schema at build time
 * (fast-validators.generated.ts): it returns exactly zod's output for input
 * zod accepts, and says "no" or "not sure" otherwise, and then zod itself
 * parses, so every refusal reads as zod words it. The generated code is
 * held to zod's by a test that regenerates it, and, in the tests, by checking
 * every fast result against zod's (`compareWithZod`).
 *
 * `name` must be unique (module name and export, e.g. `run-schema.RunFileSchema`).
 * The result behaves as the schema (a proxy that builds it on first touch).
 */
export function lazySchema<T extends object>(name: string, build: () => T): T {
  if (LAZY_SCHEMAS.has(name)) throw new Error(`lazySchema: ${name} is defined twice`);
  const real = once(build);
  const fast = Object.hasOwn(FAST_VALIDATORS, name) ? FAST_VALIDATORS[name] : undefined;
  const parsers = fast
    ? {
        safeParse(input: unknown) {
          const out = fast(input);
          if (out === NO || out === NOT_SURE) return (real() as unknown as ZodParse).safeParse(input);
          if (compareWithZod.enabled) compareWithZod(name, real(), input, out);
          return { success: true, data: out };
        },
        parse(input: unknown) {
          const out = fast(input);
          if (out === NO || out === NOT_SURE) return (real() as unknown as ZodParse).parse(input);
          if (compareWithZod.enabled) compareWithZod(name, real(), input, out);
          return out;
        },
      }
    : undefined;
  // The target stands in for the schema until it is built; every trap forwards to the built schema. A property the
  // schema defines as non-configurable is mirrored on the target too: a proxy may only report such a property if its
  // target has it.
  const target = {} as T;
  const mirror = (key: PropertyKey) => {
    const d = Reflect.getOwnPropertyDescriptor(real(), key);
    if (d && d.configurable === false && !Reflect.getOwnPropertyDescriptor(target, key)) Reflect.defineProperty(target, key, d);
    return d;
  };
  const proxy = new Proxy(target, {
    get(_, key) {
      if (parsers && (key === "safeParse" || key === "parse")) return parsers[key];
      return Reflect.get(real(), key);
    },
    set: (_, key, value) => Reflect.set(real(), key, value),
    has: (_, key) => Reflect.has(real(), key),
    ownKeys: () => {
      for (const key of Reflect.ownKeys(real())) mirror(key);
      return Reflect.ownKeys(real());
    },
    getOwnPropertyDescriptor: (_, key) => mirror(key),
    defineProperty: (_, key, descriptor) => {
      const ok = Reflect.defineProperty(real(), key, descriptor);
      if (ok) mirror(key);
      return ok;
    },
    deleteProperty: (_, key) => Reflect.deleteProperty(real(), key),
    getPrototypeOf: () => Reflect.getPrototypeOf(real()),
  });
  LAZY_SCHEMAS.set(name, { schema: proxy, zod: real });
  if (fast) FAST_OF.set(proxy, { name, fast, zod: real });
  return proxy;
}

const FAST_OF = new WeakMap<object, { name: string; fast: (input: unknown) => unknown; zod: () => object }>();

/**
 * What the generated fast validator of a `lazySchema` makes of `input`: its
 * output when it surely accepts it, else undefined (refused, not sure, or no
 * fast validator) — without ever asking zod, whose error path collects an
 * issue per bad element (see `safeParseFirstIssue`).
 */
export function fastParse(schema: object, input: unknown): { data: unknown } | undefined {
  const known = FAST_OF.get(schema);
  if (known === undefined) return undefined;
  const out = known.fast(input);
  if (out === NO || out === NOT_SURE) return undefined;
  if (compareWithZod.enabled) compareWithZod(known.name, known.zod(), input, out);
  return { data: out };
}

interface ZodParse {
  safeParse(input: unknown): { success: boolean; data?: unknown; error?: unknown };
  parse(input: unknown): unknown;
}

/**
 * In the tests, every fast result is checked against zod's: zod must accept
 * the input and give the same output, key order included. A difference
 * throws, failing the test that met it. On when TWINLOCK_COMPARE_FAST_VALIDATORS=1
 * (test/support/gate-home-setup.ts sets it, so the CLI processes the tests
 * start compare too).
 */
export function compareWithZod(name: string, schema: object, input: unknown, fast: unknown): void {
  const slow = (schema as ZodParse).safeParse(input);
  if (!slow.success) throw new Error(`fast validator ${name} accepted what zod refuses: ${String(slow.error)}`);
  const a = orderedJson(fast);
  const b = orderedJson(slow.data);
  if (a !== b) throw new Error(`fast validator ${name} gave other output than zod:\n fast ${a}\n zod  ${b}`);
}
compareWithZod.enabled = process.env.TWINLOCK_COMPARE_FAST_VALIDATORS === "1";

/** JSON that keeps key order and tells `undefined` (and a missing key) apart from `null`. */
function orderedJson(value: unknown): string {
  return JSON.stringify(value, (_, v) => (v === undefined ? "\u0000undefined" : v));
}

/** `make`'s result, made on the first call and kept: how a module builds all of its schemas together, once. */
export function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

/**
 * The exports of a module's schemas: `lazySchemasOf("run-schema", build)`
 * gives a function that makes one lazily built schema per key of what
 * `build` returns, named `run-schema.KEY`.
 */
export function lazySchemasOf<S extends Record<string, object>>(
  module: string,
  build: () => S,
): <K extends keyof S & string>(key: K) => S[K] {
  const all = once(build);
  return <K extends keyof S & string>(key: K) => lazySchema(`${module}.${key}`, () => all()[key] as S[K] & object) as S[K];
}

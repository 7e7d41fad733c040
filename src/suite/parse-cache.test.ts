import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openHomeParseCache } from "../home/home-parse-cache.js";
import { baseSuite } from "../test-support/prompt-builder.js";
import { makeTempDir, removeTempDirs, writeSuite } from "../test-support/temp-suite.js";
import { loadSuite } from "./load-suite.js";
import { exactJson, MemoryParseCache, parseCacheKey } from "./parse-cache.js";

afterAll(removeTempDirs);

const view = (root: string, cache?: MemoryParseCache) => {
  const suite = loadSuite(root, { parseCache: cache });
  return { prompts: suite.prompts.map((p) => ({ ...p, positions: p.positions.get("prompt_id") })), diagnostics: suite.diagnostics };
};

describe("the parse cache", () => {
  it("gives a suite loaded again exactly what parsing it gave, parsing nothing the second time", () => {
    const root = writeSuite(baseSuite());
    const cache = new MemoryParseCache();
    const first = view(root, cache);
    expect(first).toEqual(view(root));
    const again = new MemoryParseCache(Object.entries(JSON.parse(cache.toJson("t")).entries));
    const parsedAgain: string[] = [];
    const spying = {
      get: (d: string) => again.get(d),
      set: (d: string, data: Record<string, unknown>) => {
        parsedAgain.push(d);
        again.set(d, data);
      },
    };
    expect(view(root, spying as unknown as MemoryParseCache)).toEqual(first);
    expect(parsedAgain).toEqual([]);
  });

  it("parses a changed file again, so an edit is never hidden by what was cached", () => {
    const files = baseSuite();
    const root = writeSuite(files);
    const cache = new MemoryParseCache();
    loadSuite(root, { parseCache: cache });
    const file = Object.keys(files).find((f) => (files[f] as string).includes("prompt_id: MD-12")) as string;
    writeFileSync(path.join(root, file), (files[file] as string).replace("paired_prompt_id: MD-13", "paired_prompt_id: MD-20"));
    expect(loadSuite(root, { parseCache: cache }).byId.get("MD-12")?.pairedPromptId).toBe("MD-20");
  });

  it("keys an entry by the file's exact bytes", () => {
    expect(parseCacheKey(Buffer.from("a"))).not.toBe(parseCacheKey(Buffer.from("a ")));
  });

  it("keeps only values JSON gives back exactly (no NaN, infinities, -0 or __proto__ keys)", () => {
    expect(exactJson({ a: [1, "x", { b: null }] })).toBe('{"a":[1,"x",{"b":null}]}');
    expect(exactJson({ a: Number.NaN })).toBeUndefined();
    expect(exactJson({ a: [Number.POSITIVE_INFINITY] })).toBeUndefined();
    expect(exactJson({ a: -0 })).toBeUndefined();
    expect(exactJson(JSON.parse('{"__proto__": {"x": 1}}'))).toBeUndefined();
  });
});

describe("the parse cache in the gate home", () => {
  const withHome = (setUp?: (home: string) => void) => {
    const home = path.join(makeTempDir(), "home");
    // A home exists once a person pinned a suite: here, its marker file is enough.
    mkdirSync(home, { mode: 0o700 });
    writeFileSync(path.join(home, "home.json"), "{}\n");
    setUp?.(home);
    return home;
  };

  it("is kept in the home's cache folder and used by the next load", () => {
    const root = writeSuite(baseSuite());
    const home = withHome();
    const first = openHomeParseCache(root, home);
    expect(first).toBeDefined();
    loadSuite(root, { parseCache: first?.cache });
    first?.save();
    const [file] = readdirSync(path.join(home, "cache"));
    const stored = JSON.parse(readFileSync(path.join(home, "cache", file as string), "utf8"));
    expect(stored.format).toMatch(/^twinlock-parse-cache\/1 process-/);
    expect(Object.keys(stored.entries)).toHaveLength(loadSuite(root).prompts.length);
  });

  it("is not used, and no home is made, where there is no home", () => {
    const root = writeSuite(baseSuite());
    const nowhere = path.join(makeTempDir(), "no-home");
    expect(openHomeParseCache(root, nowhere)).toBeUndefined();
    expect(existsSync(nowhere)).toBe(false);
  });

  it("is not used from a home others can write, whose entries could have been forged", () => {
    const root = writeSuite(baseSuite());
    const home = withHome((h) => chmodSync(h, 0o777));
    expect(openHomeParseCache(root, home)).toBeUndefined();
  });

  it("ignores a damaged cache file and writes a good one over it", () => {
    const root = writeSuite(baseSuite());
    const home = withHome();
    const first = openHomeParseCache(root, home);
    loadSuite(root, { parseCache: first?.cache });
    first?.save();
    const [file] = readdirSync(path.join(home, "cache"));
    writeFileSync(path.join(home, "cache", file as string), "{ not json");
    const again = openHomeParseCache(root, home);
    expect(view(root, again?.cache as MemoryParseCache)).toEqual(view(root));
    again?.save();
    expect(JSON.parse(readFileSync(path.join(home, "cache", file as string), "utf8")).format).toMatch(/^twinlock-parse-cache\/1 /);
  });
});

describe("old parse caches", () => {
  it("are removed when another suite's cache is written, once unused for 30 days", () => {
    const root = writeSuite(baseSuite());
    const home = path.join(makeTempDir(), "home");
    mkdirSync(path.join(home, "cache"), { recursive: true, mode: 0o700 });
    writeFileSync(path.join(home, "home.json"), "{}\n");
    const old = path.join(home, "cache", `prompts-${"a".repeat(32)}.json`);
    const recent = path.join(home, "cache", `prompts-${"b".repeat(32)}.json`);
    writeFileSync(old, "{}");
    writeFileSync(recent, "{}");
    const longAgo = new Date(Date.now() - 40 * 24 * 3600 * 1000);
    utimesSync(old, longAgo, longAgo);
    const opened = openHomeParseCache(root, home);
    loadSuite(root, { parseCache: opened?.cache });
    opened?.save();
    expect(existsSync(old)).toBe(false);
    expect(existsSync(recent)).toBe(true);
  });
});

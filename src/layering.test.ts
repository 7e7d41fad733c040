/**
 * The layering is a test (STYLE habit 15, issue 25 point 7): every import of
 * every source file under src/ is held to LAYERS, the folders in data-flow
 * order (docs/architecture.md draws the same picture). A folder may import its
 * own layer and the layers before it, never one after it; FORBIDDEN adds the
 * arrows that are wrong even inside a layer. KNOWN_EXCEPTIONS names the
 * imports that break the order today, each with its reason: it may only
 * shrink (an entry that no longer breaks the order fails too, so it is taken
 * out), and a new break fails this file.
 *
 * Imports are read with a linear scan of `import … from "…"`, `export … from
 * "…"`, `import "…"` and `import("…")` (type-only imports count: a type is a
 * dependency on the layer that owns it).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";

/** The folders of src/, lowest layer first. `(root)` is src/*.ts but index.ts, which is the public API on top. */
const LAYERS: readonly (readonly string[])[] = [
  // Foundations every layer may use: errors, hashing, input budgets and parsing, diagnostics, schema plumbing, the worker pool.
  ["(root)", "errors", "crypto", "input", "diagnostics", "schemas", "offload"],
  // Files → prompt records.
  ["suite"],
  // The one place that resolves an exact twin; the capability graph.
  ["twin", "graph"],
  // Handoff records, readiness and hash.
  ["handoff"],
  // The pure core: states, events, receipts (RECEIPT_KINDS), admission checks; changed files against the plan.
  ["run", "conformance"],
  // What a notification says and how it is signed (kinds, formats, Standard Webhooks signatures); delivery is a use case in gate/.
  ["notify"],
  // Keys, signatures and trust judgement over run records; passkey verification.
  ["passkey", "trust"],
  // The suite validator, which reads the runtime's own rules (twin resolution, transition table, key lines).
  ["checks"],
  // Storage: the run store interface and its adapters, the gate home.
  ["store", "home"],
  // The use cases.
  ["gate"],
  // Built on the use cases: attestations, CI verification, the sandbox, the demo, the pages (pure functions of view data).
  ["attest", "ci", "sandbox", "demo", "web", "github"],
  // Front ends.
  ["cli", "server", "mcp", "hook", "adapters"],
  // The public API and the tests' helpers.
  ["(api)", "test-support"],
];

/** Arrows that are wrong even where the layer order allows them. */
const FORBIDDEN: Readonly<Record<string, readonly string[]>> = {
  // The hook is bundled on its own and must start fast: it reaches no other front end.
  hook: ["cli", "server", "web", "mcp"],
  // The pages are pure functions of view data: they never reach the server, MCP, the CLI or the hook.
  web: ["cli", "server", "mcp", "hook"],
};

/**
 * Imports that break the order today, `file → folder` with why. This list
 * must shrink, never grow; the moves session (store boundary, registries
 * out of the foundations) empties it.
 */
const KNOWN_EXCEPTIONS: Readonly<Record<string, string>> = {
  "schemas/lazy-schema-modules.ts → handoff": "the lazy-schema registry names every schema module; it belongs above them all",
  "schemas/lazy-schema-modules.ts → home": "the lazy-schema registry names every schema module; it belongs above them all",
  "schemas/lazy-schema-modules.ts → passkey": "the lazy-schema registry names every schema module; it belongs above them all",
  "schemas/lazy-schema-modules.ts → run": "the lazy-schema registry names every schema module; it belongs above them all",
  "schemas/lazy-schema-modules.ts → suite": "the lazy-schema registry names every schema module; it belongs above them all",
  "schemas/published-schemas.ts → handoff": "the published-schema list gathers schemas of every layer; it belongs above them",
  "schemas/published-schemas.ts → run": "the published-schema list gathers schemas of every layer; it belongs above them",
  "schemas/published-schemas.ts → suite": "the published-schema list gathers schemas of every layer; it belongs above them",
  "offload/offload-tasks.ts → gate": "the worker's task table names the tasks of every layer; to split from the pool",
  "offload/offload-tasks.ts → home": "the worker's task table names the tasks of every layer; to split from the pool",
  "offload/offload-tasks.ts → mcp": "the worker's task table names the tasks of every layer; to split from the pool",
  "offload/offload-tasks.ts → store": "the worker's task table names the tasks of every layer; to split from the pool",
  "offload/offload-tasks.ts → web": "the worker's task table names the tasks of every layer; to split from the pool",
  "input/parse-input.ts → run": "parses CLI values against the run's patterns (change refs); to move beside them",
  "input/parse-input.ts → suite": "parses CLI values against the suite's patterns (prompt IDs, modes); to move beside them",
  "suite/parse-prompt-file.ts → twin": "reads the canonical pair metadata, kept with twin resolution",
  "passkey/enrolled-reviewers.ts → home": "passkey enrolments live in the gate home: the trust store moves under store/",
  "passkey/passkey-enrolment.ts → home": "passkey enrolments live in the gate home: the trust store moves under store/",
  "passkey/reviewer-registry.ts → home": "the reviewer registry lives in the gate home: the trust store moves under store/",
  "trust/gate-key.ts → home": "the gate's key lives in the gate home: the trust store moves under store/",
  "store/postgres/postgres-shared-home.ts → server":
    "the team store keeps the server's sessions and sealed sign-ins with the server's helpers: the server-state store moves under store/",
};

const SRC = path.dirname(new URL(import.meta.url).pathname);
const FOLDERS = LAYERS.flat();

/** The layer folder of a file under src/ (relative path with forward slashes). */
function folderOf(rel: string): string {
  if (!rel.includes("/")) return rel === "index.ts" ? "(api)" : "(root)";
  return rel.slice(0, rel.indexOf("/"));
}

const layerOf = (folder: string) => LAYERS.findIndex((l) => l.includes(folder));

/** The relative module paths a file imports: one pass over its text, no regex backtracking on agent input (this is our own source). */
function importsOf(text: string): string[] {
  const out: string[] = [];
  const re =
    /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,$]+?\s+from\s+)?["'](\.[^"']*)["']|import\(\s*["'](\.[^"']*)["']\s*\)/g;
  for (const m of text.matchAll(re)) out.push((m[1] ?? m[2]) as string);
  return out;
}

interface Arrow {
  file: string;
  to: string;
  spec: string;
}

function sourceFiles(): string[] {
  return (readdirSync(SRC, { recursive: true }) as string[])
    .map((f) => f.split(path.sep).join("/"))
    .filter((f) => /\.(ts|mts)$/.test(f) && !f.endsWith(".test.ts") && !f.endsWith(".d.ts"));
}

function crossFolderArrows(): Arrow[] {
  const arrows: Arrow[] = [];
  for (const file of sourceFiles()) {
    const from = folderOf(file);
    for (const spec of importsOf(readFileSync(path.join(SRC, file), "utf8"))) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec));
      if (target.startsWith("..")) continue; // outside src/ (package.json, dist): not a layer
      const to = folderOf(target);
      if (to !== from) arrows.push({ file, to, spec });
    }
  }
  return arrows;
}

/** Why an arrow breaks the layering, or undefined when it keeps it. */
function breakOf(a: Arrow): string | undefined {
  const from = folderOf(a.file);
  if ((FORBIDDEN[from] ?? []).includes(a.to)) return `${from}/ may never import ${a.to}/`;
  if (layerOf(a.to) > layerOf(from)) return `${from}/ (layer ${layerOf(from)}) imports ${a.to}/ (layer ${layerOf(a.to)})`;
  return undefined;
}

describe("layering", () => {
  const arrows = crossFolderArrows();

  it("places every folder of src/ in exactly one layer", () => {
    const folders = new Set(sourceFiles().map(folderOf));
    folders.add("(api)");
    expect([...folders].filter((f) => layerOf(f) === -1)).toEqual([]);
    expect(FOLDERS.filter((f) => !folders.has(f))).toEqual([]);
    expect(new Set(FOLDERS).size).toBe(FOLDERS.length);
  });

  it("is drawn whole in docs/architecture.md: every folder of the layer list appears in its picture", () => {
    const doc = readFileSync(path.join(SRC, "../docs/architecture.md"), "utf8");
    const picture = doc.slice(doc.indexOf("```"), doc.indexOf("```", doc.indexOf("```") + 3));
    expect(FOLDERS.filter((f) => !picture.includes(f.startsWith("(") ? f : `${f}/`))).toEqual([]);
  });

  it("finds the imports it checks (the scan reads real import lines)", () => {
    expect(arrows.some((a) => a.file === "gate/admit.ts" && a.to === "run")).toBe(true);
    expect(
      importsOf(`import type { A } from "../x/a.js";\nexport { b } from "./b.js";\nimport "../c.js";\nconst d = await import("../d.js");`),
    ).toEqual(["../x/a.js", "./b.js", "../c.js", "../d.js"]);
  });

  it("has no import against the layer order or FORBIDDEN beyond the named exceptions", () => {
    const broken = new Map<string, string>();
    for (const a of arrows) {
      const why = breakOf(a);
      if (why) broken.set(`${a.file} → ${a.to}`, `${why} (${a.spec})`);
    }
    const unnamed = [...broken].filter(([key]) => !Object.hasOwn(KNOWN_EXCEPTIONS, key)).map(([key, why]) => `${key}: ${why}`);
    expect(unnamed, "new imports against the layering").toEqual([]);
    const healed = Object.keys(KNOWN_EXCEPTIONS).filter((key) => !broken.has(key));
    expect(healed, "exceptions that no longer break the order: take them out of KNOWN_EXCEPTIONS").toEqual([]);
  });

  it("keeps the rules the issue names without exception: nothing below gate/ imports a front end, run/ no passkey or server types, hook/ no cli/", () => {
    const frontEnds = ["cli", "server", "web", "mcp", "hook"];
    const belowGate = LAYERS.slice(0, layerOf("gate")).flat();
    const broken = arrows.filter(
      (a) =>
        (belowGate.includes(folderOf(a.file)) && frontEnds.includes(a.to)) ||
        (folderOf(a.file) === "run" && (a.to === "passkey" || a.to === "server")) ||
        (folderOf(a.file) === "hook" && a.to === "cli"),
    );
    // Today's named breaks of these rules, to reach zero: the team store's server helpers and the worker's task table.
    expect([...new Set(broken.map((a) => `${a.file} → ${a.to}`))].sort()).toEqual([
      "offload/offload-tasks.ts → mcp",
      "offload/offload-tasks.ts → web",
      "store/postgres/postgres-shared-home.ts → server",
    ]);
  });
});

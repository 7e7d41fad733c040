/**
 * One error model: every error code is in ERROR_CODES with its kind and in
 * docs/reference.md ("Error codes"), every code the source throws is one of
 * them, and each front end maps every kind (the CLI's exit code, the
 * server's HTTP status, MCP's JSON-RPC error).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { CLI_ERRORS } from "../cli/main.js";
import { DIAGNOSTIC_CODES } from "../diagnostics/diagnostic.js";
import { MCP_ERRORS } from "../mcp/create-twinlock-mcp-server.js";
import { carry, revive } from "../offload/run-off-thread.js";
import { describeProblem, HTTP_ERRORS } from "../server/http-problem.js";
import { ERROR_CODES, ERROR_KINDS, isErrorCode } from "./error-codes.js";
import { ConflictError, IntegrityError, RefusalError, TwinlockError, UsageError } from "./errors.js";

const SRC = path.join(path.dirname(new URL(import.meta.url).pathname), "..");
const doc = readFileSync(path.join(SRC, "../docs/reference.md"), "utf8");
const section = doc.slice(doc.indexOf("## Error codes"), doc.indexOf("\n## ", doc.indexOf("## Error codes") + 1));

describe("ERROR_CODES", () => {
  it("is listed whole in docs/reference.md's Error codes table, each code with its kind, and the table names no other", () => {
    expect(section.startsWith("## Error codes")).toBe(true);
    const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| (\w+) \|/gm)].map((m) => [m[1], m[2]]);
    expect(Object.fromEntries(rows)).toEqual(ERROR_CODES);
  });

  it("holds every code the source throws with (a refusal's details, an option, an HttpProblem)", () => {
    const files = (readdirSync(SRC, { recursive: true }) as string[]).filter(
      (f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.includes("generated"),
    );
    const used = new Set<string>();
    for (const f of files) {
      const text = readFileSync(path.join(SRC, f), "utf8");
      for (const m of text.matchAll(/\bcode: "([A-Z][A-Z_]+)"/g)) used.add(m[1] as string);
      for (const m of text.matchAll(/HttpProblem\(\s*\d+,\s*"([A-Z_]+)"/g)) used.add(m[1] as string);
    }
    const diagnostics = new Set<string>(DIAGNOSTIC_CODES);
    // Diagnostics are data of their own (src/diagnostics); E… are Node's errno codes on fs errors.
    const unknown = [...used].filter((c) => !diagnostics.has(c) && !/^E[A-Z]+$/.test(c) && !isErrorCode(c));
    expect(unknown).toEqual([]);
  });

  it("gives every error the source makes with a code of its own a code of the error's kind (exit code, HTTP status and MCP error agree)", () => {
    const files = (readdirSync(SRC, { recursive: true }) as string[]).filter(
      (f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.includes("generated"),
    );
    const kindOf: Record<string, string> = { UsageError: "usage", RefusalError: "refused", IntegrityError: "integrity" };
    const wrong: string[] = [];
    for (const f of files) {
      const text = readFileSync(path.join(SRC, f), "utf8");
      for (const m of text.matchAll(/new (UsageError|RefusalError|IntegrityError|ConflictError)\(/g)) {
        // The error's arguments: up to the parenthesis that closes the call.
        let depth = 1;
        let i = (m.index as number) + m[0].length;
        for (; i < text.length && depth > 0; i++) depth += text[i] === "(" ? 1 : text[i] === ")" ? -1 : 0;
        const args = text.slice((m.index as number) + m[0].length, i);
        const code = /\bcode: "([A-Z_]+)"/.exec(args)?.[1];
        if (code === undefined || !isErrorCode(code)) continue;
        const kind = m[1] === "ConflictError" ? (/\bretryable: true\b/.test(args) ? "unavailable" : "conflict") : kindOf[m[1] as string];
        if (ERROR_CODES[code] !== kind) wrong.push(`${f}: ${m[1]} with ${code} (${ERROR_CODES[code]})`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("knows no inherited name as a code", () => {
    expect(isErrorCode("constructor")).toBe(false);
    expect(isErrorCode("__proto__")).toBe(false);
    expect(isErrorCode(7)).toBe(false);
  });
});

describe("the error classes", () => {
  it("are TwinlockErrors with a kind and, without a code of their own, the kind's default", () => {
    const cases: Array<[TwinlockError, string, string]> = [
      [new UsageError("u"), "usage", "BAD_INPUT"],
      [new RefusalError("r"), "refused", "REFUSED"],
      [new ConflictError("c"), "conflict", "CONFLICT"],
      [new ConflictError("c", { retryable: true }), "unavailable", "UNAVAILABLE"],
      [new IntegrityError("i"), "integrity", "INTEGRITY"],
    ];
    for (const [error, kind, code] of cases) {
      expect(error).toBeInstanceOf(TwinlockError);
      expect([error.kind, error.code]).toEqual([kind, code]);
      expect(ERROR_CODES[error.code]).toBe(kind);
    }
  });

  it("take a refusal's code from its details (as the gate wrote it before codes were an option) or from the option", () => {
    expect(new RefusalError("stale", { code: "STALE_HASH", given: "x" }).code).toBe("STALE_HASH");
    expect(new RefusalError("none", {}, { code: "UNKNOWN_PAIR" }).code).toBe("UNKNOWN_PAIR");
    expect(new UsageError("bad", { code: "TOO_LARGE" }).code).toBe("TOO_LARGE");
    expect(new IntegrityError("damaged", { code: "HOME_DAMAGED" }).code).toBe("HOME_DAMAGED");
    expect(new IntegrityError("forked", { attack: "fork" }, { code: "CHECKPOINT_MISMATCH" }).code).toBe("CHECKPOINT_MISMATCH");
  });

  it("keep their code across the worker thread", () => {
    const back = revive(carry(new RefusalError("no pair", { executor: "MD-30" }, { code: "UNKNOWN_PAIR" })));
    expect(back).toBeInstanceOf(RefusalError);
    expect((back as RefusalError).code).toBe("UNKNOWN_PAIR");
    expect((revive(carry(new UsageError("u", { code: "TOO_LARGE" }))) as UsageError).code).toBe("TOO_LARGE");
  });
});

describe("each front end's mapping of kinds", () => {
  it.each([
    ["CLI (exit codes)", CLI_ERRORS],
    ["server (HTTP status)", HTTP_ERRORS],
    ["MCP (JSON-RPC error)", MCP_ERRORS],
  ])("%s covers every kind", (_, mapping) => {
    expect(Object.keys(mapping).sort()).toEqual([...ERROR_KINDS].sort());
  });

  it("keeps SPEC §6's exit codes: 2 for bad usage, 1 for every refusal and failure", () => {
    expect(Object.fromEntries(ERROR_KINDS.map((k) => [k, CLI_ERRORS[k].exit]))).toEqual({
      usage: 2,
      refused: 1,
      conflict: 1,
      unavailable: 1,
      integrity: 1,
      internal: 1,
    });
  });

  it("answers over HTTP with the error's own code and the status of its kind", () => {
    expect(describeProblem(new RefusalError("no pair", {}, { code: "UNKNOWN_PAIR" }))).toEqual({
      status: 409,
      body: { ok: false, code: "UNKNOWN_PAIR", message: "no pair", details: {} },
    });
    expect(describeProblem(new UsageError("bad")).status).toBe(400);
    expect(describeProblem(new ConflictError("down", { retryable: true })).status).toBe(503);
    expect(describeProblem(new Error("bug")).body.code).toBe("INTERNAL");
  });

  it("gives MCP's protocol errors a code per kind that is neither the SDK's own nor internal for a refusal", () => {
    expect(new Set(Object.values(MCP_ERRORS)).size).toBe(ERROR_KINDS.length);
    for (const k of ["refused", "conflict", "unavailable", "integrity"] as const)
      expect([-32000, -32001, -32603]).not.toContain(MCP_ERRORS[k]);
  });
});

/**
 * RECEIPT_KINDS (src/run/receipt-kinds.ts) is the one place that says how
 * each receipt kind is handled: its right, where verify-receipts and
 * admission find it, whether CI judges it, its attestation predicate, how the
 * pages word it, its MCP field and its published schema. Every consumer reads
 * the row; none keeps a list of its own keyed by kind (the six hand-kept
 * lists drifted apart, issue 25). Then the drift they had is pinned: the
 * pages judge each receipt against its kind's right and show dry-run results
 * and stop lifts; MCP's receipts resource lists every kind.
 */
import { generateKeyPairSync } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { receiptsOf as attestedReceipts } from "./attest/attest-run.js";
import { isAttestedKind } from "./attest/receipt-statement.js";
import { decisions as ciDecisions } from "./ci/verify-run.js";
import { receiptsByPair } from "./mcp/resources/receipts.js";
import { type AnyReceipt, RECEIPT_KIND_NAMES, RECEIPT_KINDS, RECEIPT_ROWS, type ReceiptKindRow } from "./run/receipt-kinds.js";
import type { RunFile, RunState } from "./run/run-schema.js";
import { PUBLISHED_SCHEMAS } from "./schemas/published-schemas.js";
import { receiptViews } from "./server/page-views.js";
import { RIGHTS, type Right, type SuiteConfig } from "./suite/suite-config.js";
import { judgeRunReceipts } from "./trust/judge-run-receipts.js";
import { publicKeyLine } from "./trust/keys.js";
import { signReceipt } from "./trust/sign-receipt.js";

const src = path.dirname(new URL(import.meta.url).pathname);
const sources = (readdirSync(src, { recursive: true }) as string[])
  .filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.endsWith(".generated.ts"))
  .map((f) => ({ file: f.split(path.sep).join("/"), text: readFileSync(path.join(src, f), "utf8") }));

describe("receipt-kind consumers", () => {
  it("keeps no map keyed by receipt kind outside RECEIPT_KINDS (a consumer reads the row)", () => {
    const keyedByKind = /Record<ReceiptKind\b/;
    expect(sources.filter((s) => s.file !== "run/receipt-kinds.ts" && keyedByKind.test(s.text)).map((s) => s.file)).toEqual([]);
  });

  it("leaves no hand-written right in a trust judgement outside the table (the right comes from RECEIPT_KINDS)", () => {
    const literal = /(?:judgeReceiptTrust|requireTrustedReceipt)\([^;]*?,\s*"(?:review|consent|apply|freeze|stop|verify)"/;
    expect(sources.filter((s) => literal.test(s.text)).map((s) => s.file)).toEqual([]);
  });

  it("names each kind's row by its own kind, every kind once", () => {
    expect(RECEIPT_KIND_NAMES.map((k) => RECEIPT_KINDS[k].kind)).toEqual([...RECEIPT_KIND_NAMES]);
  });
});

// A run state made by hand (only what the consumers read): MD-29's pair with a dry run judged and a stop lifted on
// the whole run, and MD-31's pair with a stop lifted on it alone.
const at = (n: number) => `2026-01-01T00:00:0${n}.000Z`;
const alice = generateKeyPairSync("ed25519").privateKey;
const bob = generateKeyPairSync("ed25519").privateKey;
const config = {
  policies: { require_signed_receipts: true },
  reviewers: [
    { name: "alice", public_key: publicKeyLine(alice), rights: ["review", "consent"] },
    { name: "bob", public_key: publicKeyLine(bob), rights: ["apply", "stop"] },
  ],
} as unknown as SuiteConfig;
const hash = `sha256:${"a".repeat(64)}`;
const pairReceipt = { run_id: "run_0123456789abcdef", planner: "MD-29", executor: "MD-30", handoff_hash: hash, revision: 1 };
const dryRunBy = (by: string) => ({ kind: "dry_run_result", ...pairReceipt, result: "passed", note: "looked fine", by, at: at(2) });
const lift = (by: string, workflow: string | null, reason: string) => ({
  kind: "stop_resolution",
  run_id: pairReceipt.run_id,
  reason,
  workflow,
  stops: [3],
  by,
  resolution: `lifted ${reason}`,
  at: at(4),
});
const stateWith = (dryRun: object, runLift: object) =>
  ({
    workflows: {
      "MD-29": {
        planner: "MD-29",
        executor: "MD-30",
        handoff: null,
        reviews: [],
        consents: [],
        apply_approvals: [],
        admissions: [{ kind: "admission", ...pairReceipt, consent_hash: hash, requested: {}, checks: [], actor: "agent", at: at(3) }],
        dry_runs: [{ result_receipt: dryRun }],
      },
      "MD-31": {
        planner: "MD-31",
        executor: "MD-32",
        handoff: null,
        reviews: [],
        consents: [],
        apply_approvals: [],
        admissions: [],
        dry_runs: [],
      },
    },
    stops: [
      { reason: "outage", workflow: null, resolution_receipt: runLift },
      { reason: "other-pair", workflow: "MD-31", resolution_receipt: signReceipt(lift("bob", "MD-31", "other-pair"), bob, "bob") },
    ],
  }) as unknown as RunState;

describe("the receipts timeline of the pages", () => {
  const signed = stateWith(signReceipt(dryRunBy("bob"), bob, "bob"), signReceipt(lift("bob", null, "outage"), bob, "bob"));
  const md29 = signed.workflows["MD-29"] as RunState["workflows"][string];

  it("shows a pair's dry-run result and the run's stop lifts, verified against the apply and stop rights", () => {
    const views = receiptViews(signed, md29, config);
    expect(views.map((v) => [v.kind, v.who, v.decision, v.verified])).toEqual([
      ["dry_run_result", "bob", "dry run passed", { ok: true, reason: "bob's key, apply right" }],
      ["admission", "agent", "admitted", null],
      ["stop_resolution", "bob", "!STOP:outage lifted", { ok: true, reason: "bob's key, stop right" }],
    ]);
  });

  it("does not show another pair's stop lift on this pair", () => {
    expect(receiptViews(signed, md29, config).some((v) => v.decision === "!STOP:other-pair lifted")).toBe(false);
  });

  it("marks a dry-run result and a stop lift signed by a reviewer without the apply or stop right as not verified", () => {
    const byAlice = stateWith(signReceipt(dryRunBy("alice"), alice, "alice"), signReceipt(lift("alice", null, "outage"), alice, "alice"));
    const views = receiptViews(byAlice, byAlice.workflows["MD-29"] as RunState["workflows"][string], config);
    expect(views.filter((v) => v.kind !== "admission").map((v) => [v.kind, v.verified])).toEqual([
      ["dry_run_result", { ok: false, reason: "alice's key has the rights review, consent, not apply" }],
      ["stop_resolution", { ok: false, reason: "alice's key has the rights review, consent, not stop" }],
    ]);
  });
});

describe("MCP's receipts resource", () => {
  const state = stateWith(dryRunBy("bob"), lift("bob", null, "outage"));

  it("lists every kind under its field, the dry-run results and stop lifts included", () => {
    const [md29] = receiptsByPair(state, "MD-29");
    expect(Object.keys(md29 ?? {})).toEqual(["planner", "executor", ...RECEIPT_KIND_NAMES.map((k) => RECEIPT_KINDS[k].mcp.field)]);
    expect(md29?.dry_run_results).toEqual([dryRunBy("bob")]);
    expect(md29?.stop_resolutions).toEqual([lift("bob", null, "outage")]);
    expect(md29?.freeze).toBeNull();
  });

  it("gives a planner's token its own pair only, with the run's stop lifts and not another pair's", () => {
    const pairs = receiptsByPair(state, "MD-31");
    expect(pairs.map((p) => p.planner)).toEqual(["MD-31"]);
    expect(((pairs[0]?.stop_resolutions ?? []) as Array<{ reason: string }>).map((s) => s.reason)).toEqual(["outage", "other-pair"]);
  });
});

describe("every consumer on the verification receipt (a verified close), added as one row", () => {
  const vera = generateKeyPairSync("ed25519").privateKey;
  const withVera = {
    ...config,
    reviewers: [...(config.reviewers ?? []), { name: "vera", public_key: publicKeyLine(vera), rights: ["verify"] }],
  } as SuiteConfig;
  const verification = (by: string) => ({
    kind: "verification",
    ...pairReceipt,
    result: "verified",
    execution_hash: hash,
    by,
    at: at(5),
  });
  const closedBy = (receipt: object) => {
    const state = stateWith(dryRunBy("bob"), lift("bob", null, "outage"));
    const md29 = state.workflows["MD-29"] as RunState["workflows"][string];
    Object.assign(md29, { result: { outcome: "verified", residual: null, at: at(5), by: "x", receipt } });
    return { state, md29 };
  };
  const byVera = closedBy(signReceipt(verification("vera"), vera, "vera"));
  const byBob = closedBy(signReceipt(verification("bob"), bob, "bob"));
  const trust = (s: RunState, c: SuiteConfig) =>
    judgeRunReceipts({ file: { events: [] } as unknown as RunFile, state: s }, c)
      .filter((j) => j.kind === "verification")
      .map((j) => [j.person, j.ok]);
  const page = (s: RunState, wf: RunState["workflows"][string]) =>
    receiptViews(s, wf, withVera)
      .filter((v) => v.kind === "verification")
      .map((v) => [v.who, v.decision, v.verified]);

  it("is judged against the verify right by verify-receipts and by the pages: vera's key holds it, bob's does not", () => {
    expect(RECEIPT_KINDS.verification.right).toBe("verify");
    expect(trust(byVera.state, withVera)).toEqual([["vera", true]]);
    expect(trust(byBob.state, withVera)).toEqual([["bob", false]]);
    expect(page(byVera.state, byVera.md29)).toEqual([["vera", "verified", { ok: true, reason: "vera's key, verify right" }]]);
    expect(page(byBob.state, byBob.md29)).toEqual([
      ["bob", "verified", { ok: false, reason: "bob's key has the rights apply, stop, not verify" }],
    ]);
  });

  it("is listed by MCP under verifications, published as its schema, and attested exactly as its row says (not at all)", () => {
    const [md29] = receiptsByPair(byVera.state, "MD-29");
    expect(md29?.verifications).toEqual([byVera.md29.result?.receipt]);
    expect(Object.keys(PUBLISHED_SCHEMAS)).toContain("verification-receipt.schema.json");
    expect(isAttestedKind("verification")).toBe(RECEIPT_KINDS.verification.attestation !== null);
  });
});

describe("every consumer on a signed receipt of every row's kind (a consumer that drops a kind fails here)", () => {
  // Each row in turn holds one synthetic receipt of its kind, signed by a key with exactly the row's right; every other
  // row holds none. Rows are read at run time, so a row added to RECEIPT_KINDS is put through every consumer unedited.
  const rowsMut = RECEIPT_ROWS as Array<ReceiptKindRow & { held: ReceiptKindRow["held"] }>;
  const saved = rowsMut.map((r) => r.held);
  afterEach(() => {
    rowsMut.forEach((r, i) => {
      r.held = saved[i] as ReceiptKindRow["held"];
    });
  });
  const keyOf = generateKeyPairSync("ed25519").privateKey;
  const noRight = generateKeyPairSync("ed25519").privateKey;
  const configFor = (right: Right | null) =>
    ({
      policies: { require_signed_receipts: true },
      reviewers: [
        { name: "holder", public_key: publicKeyLine(keyOf), rights: [right ?? "review"] },
        { name: "lacking", public_key: publicKeyLine(noRight), rights: RIGHTS.filter((r) => r !== right).slice(0, 1) },
      ],
    }) as unknown as SuiteConfig;
  const synthetic = (row: ReceiptKindRow, who: string) => ({
    kind: row.kind,
    ...pairReceipt,
    decision: "approved",
    result: "passed",
    reason: "outage",
    workflow: "MD-29",
    stops: [1],
    resolution: "lifted",
    [row.signer]: who,
    at: at(6),
  });
  /** A state and run file in which only `row` holds `receipt`, on MD-29's pair (its recording event in the chain too). */
  const holding = (row: ReceiptKindRow, receipt: AnyReceipt) => {
    for (const r of rowsMut) r.held = () => (r === row ? [{ planner: "MD-29", receipt }] : []);
    const state = stateWith(dryRunBy("bob"), lift("bob", null, "outage"));
    // MCP lists a consent as replay keeps it, with the home's consumed_at: from the workflow's own list.
    if (row.kind === "consent") Object.assign(state.workflows["MD-29"] ?? {}, { consents: [receipt] });
    const file = {
      events: [{ seq: 1, type: row.events[0], data: { planner: "MD-29", receipt } }],
      state,
    } as unknown as RunFile;
    return { state, file, md29: state.workflows["MD-29"] as RunState["workflows"][string] };
  };

  it.each(RECEIPT_ROWS.map((r) => [r.kind, r] as const))(
    "handles %s in trust, CI, the pages, MCP, attestation and the published schemas",
    (_k, row) => {
      const good = signReceipt(synthetic(row, "holder"), keyOf, "holder") as unknown as AnyReceipt;
      const bad = signReceipt(synthetic(row, "lacking"), noRight, "lacking") as unknown as AnyReceipt;
      const config = configFor(row.right);
      const g = holding(row, good);

      // Trust (verify-receipts, import): a person's decision is judged against the row's right; the gate's record is not.
      const trust = (h: ReturnType<typeof holding>) =>
        judgeRunReceipts(h, config)
          .filter((j) => j.kind === row.kind)
          .map((j) => [j.person, j.ok]);
      const judgedByTrust = row.right !== null && row.judged !== null;
      expect(trust(g)).toEqual(judgedByTrust ? [["holder", true]] : []);
      const b = holding(row, bad);
      expect(trust(b)).toEqual(judgedByTrust ? [["lacking", false]] : []);

      // CI: each decision the row says CI judges, with the row's right.
      const g2 = holding(row, good);
      expect(ciDecisions(g2.state, g2.md29).map(([r, right]) => [r.kind, right])).toEqual(
        row.ciJudged && row.right !== null ? [[row.kind, row.right]] : [],
      );

      // The pages: shown as the row words it, verified against the row's right (the gate's record: by the gate, not judged).
      const views = receiptViews(g2.state, g2.md29, config).filter((v) => v.kind === row.kind);
      expect(views.map((v) => [v.who, v.decision, v.note])).toEqual([Object.values(row.shown(good))]);
      expect(views[0]?.byGate).toBe(row.right === null);
      expect(views[0]?.verified?.ok ?? null).toBe(row.right === null ? null : true);

      // MCP: listed under the row's field.
      const [pair] = receiptsByPair(g2.state, "MD-29");
      expect(pair?.[row.mcp.field]).toEqual(row.mcp.many ? [good] : good);

      // Attestation: attested exactly when the row names a predicate type.
      expect(isAttestedKind(row.kind)).toBe(row.attestation !== null);
      expect(attestedReceipts(g2.file, g2.md29)).toEqual(row.attestation === null ? [] : [good]);

      // The published schemas: the row's schema under the row's file, committed under schemas/.
      if (row.published !== null) {
        expect(PUBLISHED_SCHEMAS[row.published]).toBe(row.schema);
        expect(existsSync(path.join(src, "..", "schemas", row.published)), row.published).toBe(true);
      } else expect(Object.values(PUBLISHED_SCHEMAS)).not.toContain(row.schema);
    },
  );
});

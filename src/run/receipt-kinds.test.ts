/**
 * The receipt-kind table held to the schemas and events it names (pure: no
 * disk, no CLI). The consumers are held to it in src/receipt-kind-consumers.test.ts.
 */
import { describe, expect, it } from "vitest";
import { RIGHTS } from "../suite/suite-config.js";
import { EVENT_DATA } from "./apply-event.js";
import { heldReceipts, RECEIPT_KIND_NAMES, RECEIPT_KINDS, RECEIPT_ROWS, receiptKindOf } from "./receipt-kinds.js";
import { EVENT_TYPES, type RunState } from "./run-schema.js";

type Field = { _zod: { def: { values?: unknown[]; shape?: Shape; innerType?: Field } } };
type Shape = Record<string, Field>;
const shapeOf = (schema: unknown): Shape => (schema as { _zod: { def: { shape: Shape } } })._zod.def.shape;

describe("RECEIPT_KINDS", () => {
  it("has one row per kind name, in the table's order, each naming its own kind", () => {
    expect(RECEIPT_ROWS.map((r) => r.kind)).toEqual([...RECEIPT_KIND_NAMES]);
    for (const kind of RECEIPT_KIND_NAMES) expect(RECEIPT_KINDS[kind].kind).toBe(kind);
  });

  it.each(RECEIPT_KIND_NAMES)("gives %s a schema whose kind literal is the row's and which has the signer field", (kind) => {
    const shape = shapeOf(RECEIPT_KINDS[kind].schema);
    expect(shape.kind?._zod.def.values).toEqual([kind]);
    expect(Object.keys(shape)).toContain(RECEIPT_KINDS[kind].signer);
    expect(Object.keys(shape)).toContain("at");
  });

  it.each(RECEIPT_KIND_NAMES)("names events for %s that carry a receipt of exactly that kind", (kind) => {
    expect(RECEIPT_KINDS[kind].events.length).toBeGreaterThan(0);
    for (const event of RECEIPT_KINDS[kind].events) {
      const field = shapeOf(EVENT_DATA[event]).receipt;
      expect(field, `${event} carries no receipt`).toBeDefined();
      // A receipt only some of the event's records carry (a verified close's) is optional: its kind is the inner schema's.
      const receipt = field?._zod.def.innerType ?? field;
      expect(receipt?._zod.def.shape?.kind?._zod.def.values).toEqual([kind]);
    }
  });

  it("covers every event that carries a receipt, each by exactly one row", () => {
    const carrying = EVENT_TYPES.filter((e) => shapeOf(EVENT_DATA[e]).receipt !== undefined);
    const named = RECEIPT_ROWS.flatMap((r) => r.events);
    expect([...named].sort()).toEqual([...carrying].sort());
  });

  // SPEC §9: review, consent, apply approval and lifting a stop are signed with their right; a freeze with `freeze`.
  // docs/reference.md: a dry run's result is judged by a person holding the `apply` right.
  // Issue 26: closing a workflow verified is a person's call, signed with `verify`.
  // SPEC §12: the gate signs the records it makes itself (admission): no person's right applies.
  const SPEC_RIGHTS: Record<string, string | null> = {
    freeze: "freeze",
    review: "review",
    consent: "consent",
    apply_approval: "apply",
    dry_run_result: "apply",
    admission: null,
    stop_resolution: "stop",
    verification: "verify",
  };

  it("gives each decision SPEC §9 names its right, and the gate's own admission record none", () => {
    const named = RECEIPT_ROWS.filter((r) => r.kind in SPEC_RIGHTS);
    expect(named.map((r) => r.kind).sort()).toEqual(Object.keys(SPEC_RIGHTS).sort());
    for (const r of named) expect(r.right, r.kind).toBe(SPEC_RIGHTS[r.kind]);
  });

  it("gives every kind a person signs one of the suite's rights, and only the gate's own record (signed by the actor it admitted for) none", () => {
    for (const r of RECEIPT_ROWS) {
      if (r.signer === "actor") expect(r.right, r.kind).toBeNull();
      else expect(RIGHTS as readonly (string | null)[], r.kind).toContain(r.right);
    }
  });

  it("finds a row by a kind string, and none for a kind no row names (even one inherited from Object)", () => {
    expect(receiptKindOf("review")?.right).toBe("review");
    expect(receiptKindOf("constructor")).toBeUndefined();
    expect(receiptKindOf("__proto__")).toBeUndefined();
    expect(receiptKindOf("stop-resolution")).toBeUndefined();
  });
});

describe("heldReceipts", () => {
  const at = "2026-01-01T00:00:00.000Z";
  const state = {
    workflows: {
      "MD-29": {
        planner: "MD-29",
        handoff: { receipt: { kind: "freeze", by: "planner", at } },
        reviews: [{ kind: "review", reviewer: "alice", at }],
        consents: [{ kind: "consent", user: "bob", at, consumed_at: at }],
        apply_approvals: [],
        admissions: [{ kind: "admission", actor: "agent", at }],
        dry_runs: [{ result_receipt: null }, { result_receipt: { kind: "dry_run_result", by: "carol", at } }],
      },
    },
    stops: [
      { reason: "a", workflow: null, resolution_receipt: { kind: "stop_resolution", by: "dan", at } },
      { reason: "b", workflow: "MD-29", resolution_receipt: null },
    ],
  } as unknown as RunState;

  it("lists every receipt replay keeps, kind by kind, with its workflow (a run's stop lift with none)", () => {
    expect(heldReceipts(state).map((h) => [h.row.kind, h.planner])).toEqual([
      ["freeze", "MD-29"],
      ["review", "MD-29"],
      ["consent", "MD-29"],
      ["dry_run_result", "MD-29"],
      ["admission", "MD-29"],
      ["stop_resolution", null],
    ]);
  });

  it("gives a consent as recorded, without the home's consumed_at", () => {
    const consent = heldReceipts(state).find((h) => h.row.kind === "consent");
    expect(consent?.receipt).toEqual({ kind: "consent", user: "bob", at });
  });
});

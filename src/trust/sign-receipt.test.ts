import { createPrivateKey } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { generateReviewerKey } from "./keys.js";
import { signReceipt, verifyReceiptSignature } from "./sign-receipt.js";

const alice = createPrivateKey(generateReviewerKey().privatePem);
const mallory = createPrivateKey(generateReviewerKey().privatePem);

const receipt = () => ({
  kind: "review",
  run_id: "run-1",
  planner: "MD-29",
  executor: "MD-30",
  handoff_hash: `sha256:${"a".repeat(64)}`,
  revision: 2,
  decision: "approved",
  reviewer: "alice",
  at: "2026-11-30T12:00:00.000Z",
});

describe("verifyReceiptSignature", () => {
  it("remembers its answer only for the exact bytes, key and signature: a receipt changed after a first look is judged again", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("run_id", "planner", "executor", "handoff_hash", "decision", "reviewer", "at"),
        fc.string({ minLength: 1, maxLength: 20 }),
        (field, value) => {
          const signed: ReturnType<typeof signReceipt<ReturnType<typeof receipt>>> & Record<string, unknown> = signReceipt(
            receipt(),
            alice,
            "alice",
          );
          expect(verifyReceiptSignature(signed)).toBe(true);
          fc.pre(signed[field] !== value);
          signed[field] = value;
          expect(verifyReceiptSignature(signed)).toBe(false);
        },
      ),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 200) },
    );
  });

  it("does not carry a remembered yes over to another key or another signature value on the same bytes", () => {
    const signed = signReceipt(receipt(), alice, "alice");
    expect(verifyReceiptSignature(signed)).toBe(true);
    const otherKey = signReceipt(receipt(), mallory, "alice");
    expect(verifyReceiptSignature({ ...signed, signature: { ...signed.signature, public_key: otherKey.signature.public_key } })).toBe(
      false,
    );
    const flipped = Buffer.from(signed.signature.value, "base64");
    flipped[0] = (flipped[0] as number) ^ 1;
    expect(verifyReceiptSignature({ ...signed, signature: { ...signed.signature, value: flipped.toString("base64") } })).toBe(false);
    expect(verifyReceiptSignature(signed)).toBe(true);
  });

  it("refuses a malformed key or signature value without throwing, each time it is asked", () => {
    const signed = signReceipt(receipt(), alice, "alice");
    const bad = { ...signed, signature: { ...signed.signature, public_key: "ed25519:nonsense" } };
    expect(verifyReceiptSignature(bad)).toBe(false);
    expect(verifyReceiptSignature(bad)).toBe(false);
    expect(verifyReceiptSignature({ ...signed, signature: { ...signed.signature, value: "%%%" } })).toBe(false);
  });
});

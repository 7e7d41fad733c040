import { escapeHtml } from "./escape-html.js";
import type { ReceiptView } from "./view-model.js";

const SIGNATURES = { ed25519: "signed with an Ed25519 key", webauthn: "signed with a passkey", unsigned: "unsigned" } as const;

/** The verified mark of a receipt: ✓ or ✗ with the reason in words, or a warning that an unsigned receipt proves nothing. */
function mark(r: ReceiptView): string {
  if (r.byGate && r.signature === "unsigned") return `<span class="mark mark-gate">recorded by the gate</span>`;
  if (r.signature === "unsigned" || r.verified === null) return `<span class="mark mark-unsigned">proves nothing about who decided</span>`;
  return r.verified.ok
    ? `<span class="mark mark-ok"><span aria-hidden="true">✓</span> verified</span> <span class="reason">${escapeHtml(r.verified.reason)}</span>`
    : `<span class="mark mark-bad"><span aria-hidden="true">✗</span> not verified</span> <span class="reason">${escapeHtml(r.verified.reason)}</span>`;
}

/**
 * The receipts timeline, oldest first: each receipt's kind, who, decision,
 * revision, hash, time, how it is signed and whether the signature verified
 * (said in words beside the ✓/✗); a record the gate writes itself (an
 * admission) is said to be recorded by the gate, not "unsigned".
 */
export function renderReceipts(receipts: readonly ReceiptView[]): string {
  if (receipts.length === 0) return `<p>No receipts yet.</p>`;
  const e = escapeHtml;
  const items = receipts.map((r) => {
    const facts = [
      `<dt>who</dt><dd>${e(r.who)}</dd>`,
      r.decision === null ? "" : `<dt>decision</dt><dd>${e(r.decision)}</dd>`,
      r.note === null ? "" : `<dt>note</dt><dd class="note">${e(r.note)}</dd>`,
      r.revision === null ? "" : `<dt>revision</dt><dd>${r.revision}</dd>`,
      r.hash === null ? "" : `<dt>hash</dt><dd><code class="hash">${e(r.hash)}</code></dd>`,
      r.byGate && r.signature === "unsigned"
        ? `<dt>signature</dt><dd>${mark(r)}: not a person's decision, so no person's signature</dd>`
        : r.signature === "unsigned"
          ? `<dt>signature</dt><dd>not signed: recorded by the gate on ${e(r.who)}'s word, so it ${mark(r)}</dd>`
          : `<dt>signature</dt><dd>${Object.hasOwn(SIGNATURES, r.signature) ? SIGNATURES[r.signature] : e(r.signature)}: ${mark(r)}</dd>`,
    ].join("");
    return `<li class="receipt receipt-${e(r.kind)}"><p class="receipt-head"><strong>${e(r.kind.replace(/_/g, " "))}</strong> <time datetime="${e(r.at)}">${e(r.at)}</time></p>
<dl>${facts}</dl></li>`;
  });
  return `<ol class="timeline">\n${items.join("\n")}\n</ol>`;
}

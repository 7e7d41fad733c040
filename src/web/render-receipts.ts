import { escapeHtml } from "./escape-html.js";
import type { ReceiptView } from "./view-model.js";

const SIGNATURES = { ed25519: "signed with an Ed25519 key", webauthn: "signed with a passkey", unsigned: "unsigned" } as const;

/** The verified mark of a receipt: ✓ or ✗ with the reason in words, or a warning that an unsigned receipt proves nothing. */
function mark(r: ReceiptView): string {
  if (r.signature === "unsigned" || r.verified === null)
    return `<span class="mark mark-unsigned">unsigned: proves nothing about who decided</span>`;
  return r.verified.ok
    ? `<span class="mark mark-ok"><span aria-hidden="true">✓</span> verified</span> <span class="reason">${escapeHtml(r.verified.reason)}</span>`
    : `<span class="mark mark-bad"><span aria-hidden="true">✗</span> not verified</span> <span class="reason">${escapeHtml(r.verified.reason)}</span>`;
}

/**
 * The receipts timeline, oldest first: each receipt's kind, who, decision,
 * revision, hash, time, how it is signed and whether the signature verified
 * (said in words beside the ✓/✗).
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
      `<dt>signature</dt><dd>${Object.hasOwn(SIGNATURES, r.signature) ? SIGNATURES[r.signature] : e(r.signature)}: ${mark(r)}</dd>`,
    ].join("");
    return `<li class="receipt receipt-${e(r.kind)}"><p class="receipt-head"><strong>${e(r.kind.replace(/_/g, " "))}</strong> <time datetime="${e(r.at)}">${e(r.at)}</time></p>
<dl>${facts}</dl></li>`;
  });
  return `<ol class="timeline">\n${items.join("\n")}\n</ol>`;
}

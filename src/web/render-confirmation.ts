import { escapeHtml } from "./escape-html.js";
import type { ReceiptView } from "./view-model.js";

/** What happens after a decision, by receipt kind and decision: the next step in words, never a button. */
export function describeAfterDecision(r: ReceiptView): string {
  const key = `${r.kind}:${r.decision ?? ""}`;
  switch (key) {
    case "review:approved":
      return "The plan goes on to the consent question: a reviewer with the consent right answers it on this page. Nothing runs before that.";
    case "review:changes_requested":
      return "The planner agent is told to revise: it reads your feedback from the run and freezes a new revision, which comes back here for review. Nothing runs.";
    case "review:declined":
      return "The workflow ends here: nothing of this plan runs, and the planner cannot revise it.";
    case "consent:approved":
      return "An operator now starts the executor's agent through the gate (<code>twinlock exec</code>, which admits it once): the gate lets in only this revision's exact executor, within the limits you consented to, until the consent expires.";
    case "consent:declined":
      return "Execution is refused: the gate admits no executor for this revision.";
    case "apply_approval:apply approved":
      return "The executor may now apply the change in APPLY_APPROVED mode, within the consent already given.";
    case "verification:verified":
      return "The workflow is closed as verified: your receipt binds the executed change to the approved plan, and CI's <code>twinlock verify</code> checks the change against it.";
    default:
      return "The gate has recorded it; the state above says what the workflow waits for now.";
  }
}

const HOW = { webauthn: "signed with your passkey", ed25519: "signed with your key", unsigned: "not signed" } as const;

/**
 * The confirmation of a decision just recorded, at the top of the page: what
 * was recorded (the receipt's kind, decision, revision, the hash it binds,
 * how it is signed and when) and what happens next. It takes the focus on
 * load (the client script), so a screen reader reads it first. Empty when
 * there is nothing to confirm.
 */
export function renderConfirmation(r: ReceiptView | null): string {
  if (r === null) return "";
  const e = escapeHtml;
  const what = `${e(r.kind.replace(/_/g, " "))} receipt${r.decision === null ? "" : `: <strong>${e(r.decision.replace(/_/g, " "))}</strong>`}`;
  return `<section id="confirmation" class="confirmation" role="status" tabindex="-1" aria-labelledby="confirmation-h">
<h2 id="confirmation-h">Recorded</h2>
<p>Your ${what}${r.revision === null ? "" : ` on revision ${r.revision}`}, ${HOW[r.signature] ?? e(r.signature)}, at <time datetime="${e(r.at)}">${e(r.at)}</time>.</p>
${r.hash === null ? "" : `<p>It binds the handoff hash <code class="hash">${e(r.hash)}</code>.</p>\n`}<p><strong>What happens next:</strong> ${describeAfterDecision(r)}</p>
</section>
`;
}

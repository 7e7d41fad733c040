import { escapeHtml } from "./escape-html.js";
import { localHref } from "./local-href.js";

/** What makes one form: where it posts, what it carries and says. */
export interface DecisionFormParts {
  /** The form's element ID (unique on the page); its alert region is `{id}-alert`. */
  id: string;
  /** Where it posts (a path on this server). */
  action: string;
  /** The session's CSRF token. */
  csrf: string;
  /** The handoff hash the page showed, or null for a form not bound to a revision (a stop). */
  hash: string | null;
  /** Further hidden fields, name → value. */
  hidden?: Array<[string, string]>;
  /** The visible fields, trusted HTML (each with its label). */
  fields?: string;
  /** The submit button's label. */
  submit: string;
  /** True for a decision that ends or stops something (decline, stop): its button is styled as destructive. */
  destructive?: boolean;
}

/**
 * A decision form: `method="post"`, the CSRF token and the hash it showed as
 * hidden fields, `data-passkey` (the client script signs the decision with
 * the reviewer's passkey before posting), one submit button and an alert
 * region where the script reports what went wrong.
 */
export function renderDecisionForm(p: DecisionFormParts): string {
  const id = escapeHtml(p.id);
  const hidden: Array<[string, string]> = [
    ["csrf", p.csrf],
    ...(p.hash === null ? [] : [["handoff_hash", p.hash] as [string, string]]),
    ...(p.hidden ?? []),
  ];
  return `<form id="${id}" class="decision" method="post" action="${localHref(p.action)}" data-passkey>
${hidden.map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`).join("\n")}
${p.fields ?? ""}<button type="submit"${p.destructive ? ' class="destructive"' : ""}>${escapeHtml(p.submit)}</button>
<div class="form-alert" id="${id}-alert" role="alert" aria-live="assertive"></div>
</form>`;
}

import { localHref } from "./local-href.js";
import { renderLayout } from "./render-layout.js";
import type { SignInPageView } from "./view-model.js";

/** The sign-in page: a button the client script turns into a passkey sign-in, then it goes to `next` (or `/`). */
export function renderSignInPage(v: SignInPageView): string {
  const body = `<h1>Sign in</h1>
<p>Reviewers sign in with the passkey they registered from their enrolment link.</p>
<button type="button" data-signin data-next="${v.next === null ? "/" : localHref(v.next)}">Sign in with a passkey</button>
<div class="status" id="signin-status" role="status" aria-live="polite"></div>`;
  return renderLayout(v.layout, "Sign in", body);
}

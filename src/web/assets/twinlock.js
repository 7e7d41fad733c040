// twinlock review pages: signs decisions, enrols and signs in with passkeys.
// Plain ES2020 for the browser, no build step. It runs under a CSP of
// `default-src 'self'`: no eval, no inline handlers, and it writes text
// nodes only (never innerHTML), so nothing the server echoes can run.
// It needs the SimpleWebAuthnBrowser global (@simplewebauthn/browser's UMD
// bundle, served at /assets/simplewebauthn-browser.js).
(() => {
  /** The session's CSRF token, from the layout's <meta name="csrf-token">. */
  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute("content") || "" : "";
  }

  /** A failure to show the person as it is (the server's message, or ours). */
  class ShownError extends Error {
    constructor(message, staleUrl) {
      super(message);
      this.staleUrl = staleUrl || null;
    }
  }

  /** POST a FormData or a JSON value with the CSRF token; the server's JSON reply. */
  async function post(url, body) {
    const headers = { "X-CSRF-Token": csrfToken(), Accept: "application/json" };
    const init = { method: "POST", headers, credentials: "same-origin" };
    if (body instanceof FormData) init.body = body;
    else {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let res;
    try {
      res = await fetch(url, init);
    } catch {
      throw new ShownError("The server could not be reached. Check the connection and try again.");
    }
    let data = null;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    if (data === null || typeof data !== "object")
      throw new ShownError(`The server answered ${res.status} ${res.statusText} without a reply this page can read. Reload and try again.`);
    return data;
  }

  /** A reply that refuses (`{error, message}` or `{ok: false, message}`) thrown as what to show. */
  function refuse(data) {
    if (data.error !== undefined || data.ok === false)
      throw new ShownError(String(data.message || data.error || "The server refused the request."), data.stale_url);
    return data;
  }

  /** A path on this origin, or null: the page never navigates elsewhere on the server's word. */
  function sameOrigin(url) {
    if (typeof url !== "string" || url === "") return null;
    try {
      const u = new URL(url, window.location.href);
      return u.origin === window.location.origin ? u.href : null;
    } catch {
      return null;
    }
  }

  /** The library that speaks WebAuthn, or a clear reason it cannot be used. */
  function webauthn() {
    const lib = window.SimpleWebAuthnBrowser;
    if (!lib) throw new ShownError("The passkey script did not load. Reload the page.");
    if (!lib.browserSupportsWebAuthn())
      throw new ShownError("This browser does not support passkeys. Use a current browser with a passkey or security key.");
    return lib;
  }

  /** A WebAuthn failure in words a person can act on. */
  function describePasskeyError(error) {
    if (error instanceof ShownError) return error;
    const name = error && (error.name || error.cause?.name);
    if (name === "NotAllowedError" || name === "AbortError")
      return new ShownError(
        "The passkey request was cancelled, timed out, or no passkey for this site was found on this device. Try again and confirm on your device.",
      );
    if (name === "InvalidStateError") return new ShownError("This device already holds a passkey for this reviewer.");
    if (name === "SecurityError")
      return new ShownError("The browser refused the passkey request for this address (passkeys need HTTPS or localhost).");
    if (name === "NotSupportedError") return new ShownError("This device cannot create or use a passkey of the kind the server asks for.");
    return new ShownError(`The passkey step failed: ${error?.message || String(error)}`);
  }

  /** Show `error` in `region` as text, with a link to the current revision when the hash was stale. */
  function showError(region, error) {
    if (!region) return;
    region.textContent = error.message;
    const stale = sameOrigin(error.staleUrl);
    if (stale) {
      region.append(" ");
      const a = document.createElement("a");
      a.href = stale;
      a.textContent = "See the current revision.";
      region.append(a);
    }
  }

  /** Run `work` with `button` disabled and busy, showing any failure in `region`. */
  async function busy(button, region, work) {
    if (button) {
      button.disabled = true;
      button.setAttribute("aria-busy", "true");
    }
    if (region) region.textContent = "";
    try {
      await work();
    } catch (error) {
      showError(region, describePasskeyError(error));
    } finally {
      if (button) {
        button.disabled = false;
        button.removeAttribute("aria-busy");
      }
    }
  }

  /** A decision form: ask for the challenge, sign it with the passkey, post the decision with the assertion. */
  async function signAndSubmit(form) {
    const lib = webauthn();
    const action = form.action;
    const challenge = refuse(await post(`${action}/challenge`, new FormData(form)));
    if (!challenge.challenge_id || !challenge.options) throw new ShownError("The server's challenge was incomplete. Reload and try again.");
    let assertion;
    try {
      assertion = await lib.startAuthentication({ optionsJSON: challenge.options });
    } catch (error) {
      throw describePasskeyError(error);
    }
    const body = new FormData(form);
    body.append("challenge_id", String(challenge.challenge_id));
    body.append("assertion", JSON.stringify(assertion));
    const result = refuse(await post(action, body));
    const next = sameOrigin(result.location);
    window.location.assign(next || window.location.href);
  }

  /** Registration from an enrolment link. */
  async function enrol(button, status) {
    const lib = webauthn();
    const token = encodeURIComponent(button.getAttribute("data-enrol") || "");
    const reply = refuse(await post(`/enrol/${token}/options`, {}));
    const optionsJSON = reply.options || reply;
    let response;
    try {
      response = await lib.startRegistration({ optionsJSON });
    } catch (error) {
      throw describePasskeyError(error);
    }
    const result = refuse(await post(`/enrol/${token}`, { response }));
    status.textContent = `Passkey registered for ${String(result.name || "you")}. You can now `;
    const a = document.createElement("a");
    a.href = "/signin";
    a.textContent = "sign in";
    status.append(a, ".");
    button.hidden = true;
  }

  /** Sign-in with a passkey, then on to where the server says (or the page's data-next). */
  async function signIn(button) {
    const lib = webauthn();
    const reply = refuse(await post("/signin/options", {}));
    const optionsJSON = reply.options || reply;
    let response;
    try {
      response = await lib.startAuthentication({ optionsJSON });
    } catch (error) {
      throw describePasskeyError(error);
    }
    const result = refuse(await post("/signin", { response }));
    window.location.assign(sameOrigin(result.location) || sameOrigin(button.getAttribute("data-next")) || "/");
  }

  // A decision just recorded: its confirmation takes the focus (read first), and a reload does not show it again.
  const confirmation = document.getElementById("confirmation");
  if (confirmation) {
    confirmation.focus();
    if (window.location.search !== "") window.history.replaceState(null, "", window.location.pathname + window.location.hash);
  }

  document.addEventListener("submit", (event) => {
    const form = event.target;
    if (form instanceof HTMLFormElement && form.hasAttribute("data-signout")) {
      event.preventDefault();
      post("/signout", {})
        .then(refuse)
        .then((reply) => window.location.assign(sameOrigin(reply.location) || "/signin"))
        .catch(() => form.submit());
      return;
    }
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-passkey")) return;
    // Request changes needs feedback or a comment on an item or a file line (the gate refuses neither too): say so here.
    const unless = form.querySelector("[data-required-unless-comments]");
    if (unless && typeof unless.value === "string") {
      const commented = Array.from(form.elements).some(
        (el) => /^comment(-file)?:/.test(el.name || "") && String(el.value || "").trim() !== "",
      );
      const empty = unless.value.trim() === "" && !commented;
      unless.setCustomValidity(empty ? "Say what should change, or comment on an item or a file line." : "");
      if (empty) {
        event.preventDefault();
        unless.reportValidity();
        return;
      }
    }
    event.preventDefault();
    const button = form.querySelector('button[type="submit"]');
    const region = form.querySelector('[role="alert"]');
    busy(button, region, () => signAndSubmit(form));
  });

  document.addEventListener("click", (event) => {
    const target = event.target instanceof Element ? event.target : null;
    const enrolButton = target ? target.closest("[data-enrol]") : null;
    if (enrolButton) {
      const status = document.getElementById("enrol-status");
      busy(enrolButton, status, () => enrol(enrolButton, status));
      return;
    }
    const signInButton = target ? target.closest("[data-signin]") : null;
    if (signInButton) busy(signInButton, document.getElementById("signin-status"), () => signIn(signInButton));
  });
})();

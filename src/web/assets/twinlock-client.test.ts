import { readFileSync } from "node:fs";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";

/** twinlock.js run against a small stand-in for the browser: forms, buttons, fetch and SimpleWebAuthnBrowser. */
const SCRIPT = readFileSync(new URL("./twinlock.js", import.meta.url), "utf8");

class FakeElement {
  attrs = new Map<string, string>();
  textContent = "";
  appended: unknown[] = [];
  disabled = false;
  hidden = false;
  href = "";
  constructor(attrs: Record<string, string> = {}) {
    for (const [k, v] of Object.entries(attrs)) this.attrs.set(k, v);
  }
  getAttribute(name: string) {
    return this.attrs.get(name) ?? null;
  }
  setAttribute(name: string, value: string) {
    this.attrs.set(name, value);
  }
  removeAttribute(name: string) {
    this.attrs.delete(name);
  }
  hasAttribute(name: string) {
    return this.attrs.has(name);
  }
  closest(selector: string) {
    const attr = /^\[([a-z-]+)\]$/.exec(selector)?.[1];
    return attr !== undefined && this.attrs.has(attr) ? this : null;
  }
  append(...nodes: unknown[]) {
    this.appended.push(...nodes);
  }
  /** What a person reads in it: its text and the text of what was appended. */
  get shown() {
    return this.textContent + this.appended.map((n) => (typeof n === "string" ? n : (n as FakeElement).textContent)).join("");
  }
}

class FakeForm extends FakeElement {
  button = new FakeElement({ type: "submit" });
  alert = new FakeElement({ role: "alert" });
  constructor(
    public action: string,
    public fields: Array<[string, string]>,
  ) {
    super({ "data-passkey": "" });
  }
  querySelector(selector: string) {
    return selector.startsWith("button") ? this.button : this.alert;
  }
}

interface Call {
  url: string;
  init: { method: string; headers: Record<string, string>; credentials: string; body: unknown };
}

function browser(replies: unknown[], webauthn: { authenticate?: () => Promise<unknown> } = {}) {
  const listeners = new Map<string, (e: unknown) => void>();
  const calls: Call[] = [];
  const assigned: string[] = [];
  const byId = new Map<string, FakeElement>([
    ["enrol-status", new FakeElement({ role: "status" })],
    ["signin-status", new FakeElement({ role: "status" })],
  ]);
  const authCalls: unknown[] = [];
  class ContextFormData extends FormData {
    constructor(form?: FakeForm) {
      super();
      for (const [k, v] of form?.fields ?? []) this.append(k, v);
    }
  }
  const context = {
    FormData: ContextFormData,
    HTMLFormElement: FakeForm,
    Element: FakeElement,
    URL,
    JSON,
    String,
    Error,
    encodeURIComponent,
    document: {
      querySelector: (s: string) => (s === 'meta[name="csrf-token"]' ? new FakeElement({ content: "csrf-1" }) : null),
      getElementById: (id: string) => byId.get(id) ?? null,
      createElement: () => new FakeElement(),
      addEventListener: (type: string, fn: (e: unknown) => void) => listeners.set(type, fn),
    },
    fetch: async (url: string, init: Call["init"]) => {
      calls.push({ url, init });
      const reply = replies.shift();
      return { status: 200, statusText: "OK", json: async () => reply };
    },
    window: {
      location: {
        href: "http://127.0.0.1:7420/runs/r/pairs/MD-29/revisions/2",
        origin: "http://127.0.0.1:7420",
        assign: (u: string) => assigned.push(u),
      },
      SimpleWebAuthnBrowser: {
        browserSupportsWebAuthn: () => true,
        startAuthentication: async (o: unknown) => {
          authCalls.push(o);
          return webauthn.authenticate ? webauthn.authenticate() : { id: "cred", response: { signature: "sig" } };
        },
        startRegistration: async (o: unknown) => {
          authCalls.push(o);
          return { id: "new-cred" };
        },
      },
    },
  };
  runInNewContext(SCRIPT, context);
  const settle = () => new Promise((r) => setTimeout(r, 10));
  return {
    calls,
    assigned,
    authCalls,
    byId,
    async submit(form: FakeForm) {
      let prevented = false;
      listeners.get("submit")?.({ target: form, preventDefault: () => (prevented = true) });
      await settle();
      return prevented;
    },
    async click(el: FakeElement) {
      listeners.get("click")?.({ target: el });
      await settle();
    },
  };
}

const ACTION = "http://127.0.0.1:7420/runs/r/pairs/MD-29/review";
const approveForm = () =>
  new FakeForm(ACTION, [
    ["csrf", "csrf-1"],
    ["handoff_hash", "sha256:bb"],
    ["decision", "approved"],
  ]);

describe("twinlock.js", () => {
  it("signs a decision: asks for the challenge, signs it with the passkey, posts the decision with the assertion, then goes where the server says", async () => {
    const b = browser([
      { challenge_id: "c1", options: { challenge: "abc" } },
      { ok: true, location: "/runs/r/pairs/MD-29/revisions/2" },
    ]);
    const form = approveForm();
    expect(await b.submit(form)).toBe(true);
    expect(b.calls.map((c) => c.url)).toEqual([`${ACTION}/challenge`, ACTION]);
    for (const c of b.calls) {
      expect(c.init.method).toBe("POST");
      expect(c.init.headers["X-CSRF-Token"]).toBe("csrf-1");
      expect(c.init.credentials).toBe("same-origin");
    }
    expect(((b.calls[0] as Call).init.body as FormData).get("handoff_hash")).toBe("sha256:bb");
    expect(b.authCalls).toEqual([{ optionsJSON: { challenge: "abc" } }]);
    const final = b.calls[1]?.init.body as FormData;
    expect(final.get("challenge_id")).toBe("c1");
    expect(JSON.parse(String(final.get("assertion")))).toEqual({ id: "cred", response: { signature: "sig" } });
    expect(final.get("decision")).toBe("approved");
    expect(b.assigned).toEqual(["http://127.0.0.1:7420/runs/r/pairs/MD-29/revisions/2"]);
  });

  it("shows a stale-hash refusal in the form's alert region with a link to the current revision, and enables the button again", async () => {
    const b = browser([{ error: "stale_hash", message: "Revision 2 is no longer current.", stale_url: "/runs/r/pairs/MD-29/revisions/3" }]);
    const form = approveForm();
    await b.submit(form);
    expect(form.alert.shown).toBe("Revision 2 is no longer current. See the current revision.");
    expect((form.alert.appended[1] as FakeElement).href).toBe("http://127.0.0.1:7420/runs/r/pairs/MD-29/revisions/3");
    expect(form.button.disabled).toBe(false);
    expect(b.assigned).toEqual([]);
  });

  it("says the passkey request was cancelled when the person cancels, and posts no decision", async () => {
    const cancelled = Object.assign(new Error("cancelled"), { name: "NotAllowedError" });
    const b = browser([{ challenge_id: "c1", options: {} }], { authenticate: () => Promise.reject(cancelled) });
    const form = approveForm();
    await b.submit(form);
    expect(form.alert.shown).toMatch(/^The passkey request was cancelled/);
    expect(b.calls).toHaveLength(1);
  });

  it("never navigates to another origin on the server's word", async () => {
    const b = browser([
      { challenge_id: "c1", options: {} },
      { ok: true, location: "https://evil.example/" },
    ]);
    await b.submit(approveForm());
    expect(b.assigned).toEqual(["http://127.0.0.1:7420/runs/r/pairs/MD-29/revisions/2"]);
  });

  it("registers a passkey from an enrolment link and says who it is for, with a link to sign in", async () => {
    const b = browser([{ challenge: "reg" }, { ok: true, name: "bob" }]);
    await b.click(new FakeElement({ "data-enrol": "tok123" }));
    expect(b.calls.map((c) => c.url)).toEqual(["/enrol/tok123/options", "/enrol/tok123"]);
    expect(b.authCalls).toEqual([{ optionsJSON: { challenge: "reg" } }]);
    expect(JSON.parse(String(b.calls[1]?.init.body))).toEqual({ response: { id: "new-cred" } });
    expect(b.byId.get("enrol-status")?.shown).toBe("Passkey registered for bob. You can now sign in.");
  });

  it("signs in with a passkey and goes where the server says", async () => {
    const b = browser([{ options: { challenge: "s" } }, { ok: true, location: "/runs" }]);
    await b.click(new FakeElement({ "data-signin": "", "data-next": "/" }));
    expect(b.calls.map((c) => c.url)).toEqual(["/signin/options", "/signin"]);
    expect(b.calls[1]?.init.headers["X-CSRF-Token"]).toBe("csrf-1");
    expect(b.assigned).toEqual(["http://127.0.0.1:7420/runs"]);
  });
});

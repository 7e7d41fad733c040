/**
 * A gate server for tests, without a socket: its own gate home, a pinned
 * suite (signing, or pinned with --allow-unsigned), a run with the demo
 * handoff, the app from `createGateApp`, and helpers that play each party:
 * the agent with a token, and a reviewer with a software passkey going
 * through enrolment, sign-in and two-step decisions exactly as the page does.
 */
import { createPrivateKey, type KeyObject } from "node:crypto";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { PublicKeyCredentialCreationOptionsJSON } from "@simplewebauthn/server";
import { parseDocument } from "yaml";
import { demoHandoffRecords, writeDemoHandoff } from "../demo/demo-handoff.js";
import { initRun } from "../gate/init-run.js";
import { folderRunStore } from "../home/folder-run-store.js";
import { type GateHome, openGateHome } from "../home/gate-home.js";
import { readRun } from "../home/run-ledger.js";
import { pinSuite } from "../home/suite-pins.js";
import { createInvitation } from "../passkey/passkey-enrolment.js";
import { SoftwareAuthenticator } from "../passkey/software-authenticator.js";
import type { Workflow } from "../run/run-schema.js";
import { createAgentToken } from "../server/agent-tokens.js";
import { apiPaths } from "../server/api-paths.js";
import { type AccessLogEntry, createGateApp, type GateServerConfig } from "../server/create-gate-app.js";
import type { RunStore } from "../store/run-store.js";
import type { Mode } from "../suite/prompt.js";
import { generateReviewerKey } from "../trust/keys.js";
import { RUN_EXAMPLE_SUITE, TEST_PINNER } from "./run-fixture.js";
import { EXAMPLE_SUITE } from "./temp-suite.js";

/** The origin every test app believes it is served at. */
export const TEST_ORIGIN = "http://localhost:7420";
export const TEST_HOST = "localhost:7420";
export const RP = { rpId: "localhost", origin: TEST_ORIGIN };
export const PLANNER = "MD-29";
export const EXECUTOR = "MD-30";

/** One server's world: home, store, suite, run and app, and everything the access log wrote. */
export interface ServerWorld {
  dir: string;
  home: GateHome;
  store: RunStore;
  suite: string;
  handoff: string;
  runFile: string;
  runId: string;
  app: ReturnType<typeof createGateApp>["app"];
  logs: AccessLogEntry[];
  /** The planner agent's freeze key, listed in a signing suite. */
  plannerKey: KeyObject | undefined;
  signing: boolean;
  /** The origin the app was told it is served at (passkeys bind to it). */
  origin: string;
}

/** The relying party a world's passkeys assert to. */
export function rpOf(w: ServerWorld): { rpId: string; origin: string } {
  return { rpId: new URL(w.origin).hostname, origin: w.origin };
}

const worlds: string[] = [];

/** Remove every world's folder (call in afterEach). */
export function removeServerWorlds(): void {
  for (const d of worlds.splice(0)) rmSync(d, { recursive: true, force: true });
}

/** A temporary folder removed with the worlds. */
export function serverTempDir(prefix = "twinlock-server-"): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  worlds.push(dir);
  return dir;
}

/**
 * A fresh world. `signing`: a copy of the example suite that requires
 * signed receipts, listing only the planner agent's freeze key (people sign
 * with their enrolled passkeys); otherwise the unsigned example copy pinned
 * with --allow-unsigned.
 */
export async function serverWorld(
  o: {
    signing?: boolean;
    mode?: Mode;
    environment?: string;
    budget?: number | null;
    now?: () => Date;
    config?: Partial<GateServerConfig>;
    /** The change the run is bound to (`init-run --for-change`). */
    change?: string;
  } = {},
): Promise<ServerWorld> {
  const dir = serverTempDir();
  const home = openGateHome(path.join(dir, "home"), { create: true });
  const store = folderRunStore(home);
  let suite = RUN_EXAMPLE_SUITE;
  let plannerKey: KeyObject | undefined;
  if (o.signing) {
    suite = path.join(dir, "suite");
    cpSync(EXAMPLE_SUITE, suite, { recursive: true });
    const made = generateReviewerKey();
    plannerKey = createPrivateKey(made.privatePem);
    const file = path.join(suite, "twinlock.yaml");
    const doc = parseDocument(readFileSync(file, "utf8"));
    // A person's Ed25519 key too: a signing suite is pinned only when someone listed can review.
    doc.set("reviewers", [
      { name: "planner-agent", public_key: made.publicKey, rights: ["freeze"] },
      { name: "terminal-reviewer", public_key: generateReviewerKey().publicKey, rights: ["review", "consent"] },
    ]);
    doc.set("suite_id", `server-signing-${path.basename(dir).slice(-6).toLowerCase()}`);
    writeFileSync(file, doc.toString());
    await pinSuite(home, { suiteDir: suite, key: TEST_PINNER });
  } else {
    await pinSuite(home, { suiteDir: suite, allowUnsigned: true, key: TEST_PINNER });
  }
  const handoff = path.join(dir, "handoff");
  writeDemoHandoff(handoff, demoHandoffRecords());
  const runFile = path.join(dir, "run.json");
  const run = await initRun({
    run: runFile,
    store,
    suiteRoot: suite,
    planners: [PLANNER],
    mode: o.mode ?? "APPLY_SAFE",
    environment: o.environment ?? "staging",
    actions: "all",
    budget: o.budget ?? null,
    actor: "planner-agent",
    ...(o.change === undefined ? {} : { change: o.change }),
  });
  const logs: AccessLogEntry[] = [];
  const { app } = createGateApp({
    store,
    origin: TEST_ORIGIN,
    allowedHosts: [TEST_HOST],
    tls: false,
    insecureHttp: false,
    now: o.now,
    log: (e) => logs.push(e),
    ...o.config,
  });
  return {
    dir,
    home,
    store,
    suite,
    handoff,
    runFile,
    runId: run.state.run_id,
    app,
    logs,
    plannerKey,
    signing: o.signing === true,
    origin: o.config?.origin ?? TEST_ORIGIN,
  };
}

/** How a test request is made: JSON or a form, a bearer token, a session, extra headers. */
export interface Call {
  method?: string;
  json?: unknown;
  form?: Record<string, string>;
  token?: string;
  cookie?: string;
  csrf?: string;
  headers?: Record<string, string>;
  body?: string;
}

/** One request to the app, with this server's `Host` unless the call says otherwise. */
export async function call(w: ServerWorld, url: string, c: Call = {}): Promise<Response> {
  const headers: Record<string, string> = { host: TEST_HOST };
  let body: string | undefined = c.body;
  if (c.json !== undefined) {
    headers["content-type"] = "application/json";
    body = JSON.stringify(c.json);
  }
  if (c.form !== undefined) {
    headers["content-type"] = "application/x-www-form-urlencoded";
    body = new URLSearchParams(c.form).toString();
  }
  if (c.token !== undefined) headers.authorization = `Bearer ${c.token}`;
  if (c.cookie !== undefined) headers.cookie = c.cookie;
  if (c.csrf !== undefined) headers["x-csrf-token"] = c.csrf;
  Object.assign(headers, c.headers);
  const method = c.method ?? (body !== undefined ? "POST" : "GET");
  return w.app.request(`${TEST_ORIGIN}${url}`, { method, headers, body });
}

/** The JSON of a response (its status kept beside it). */
export async function jsonOf(r: Response): Promise<{ status: number; body: Record<string, unknown> }> {
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

/** `name=value` of a Set-Cookie header, for sending it back. */
export function cookieFrom(r: Response, name: string): string | undefined {
  for (const line of r.headers.getSetCookie()) {
    const m = new RegExp(`^${name}=([^;]*)`).exec(line);
    if (m) return `${name}=${m[1]}`;
  }
  return undefined;
}

/** A reviewer as the tests play one: their passkey, and once signed in, their cookie and CSRF token. */
export interface Reviewer {
  name: string;
  authenticator: SoftwareAuthenticator;
  cookie: string;
  csrf: string;
}

/** Invite `name` from the terminal and enrol a new software passkey through the server's enrolment routes. */
export async function enrol(
  w: ServerWorld,
  name: string,
  rights: string[] = ["review", "consent", "apply", "stop"],
  authenticator = new SoftwareAuthenticator(),
): Promise<SoftwareAuthenticator> {
  const { token } = await createInvitation(w.home, name, rights);
  const started = await jsonOf(await call(w, `/enrol/${token}/options`, { method: "POST" }));
  if (started.status !== 200) throw new Error(`enrolment options: ${JSON.stringify(started.body)}`);
  const response = authenticator.register(started.body.options as PublicKeyCredentialCreationOptionsJSON, w.origin);
  const done = await jsonOf(await call(w, `/enrol/${token}`, { json: { response } }));
  if (done.status !== 200) throw new Error(`enrolment: ${JSON.stringify(done.body)}`);
  return authenticator;
}

/** Sign in with a passkey as the sign-in page does; returns the session cookie and the page's CSRF token. */
export async function signIn(w: ServerWorld, name: string, authenticator: SoftwareAuthenticator): Promise<Reviewer> {
  const options = await call(w, "/signin/options", { method: "POST" });
  const pending = cookieFrom(options, "twinlock_signin") as string;
  const { challenge } = ((await options.json()) as { options: { challenge: string } }).options;
  const response = authenticator.assert(challenge, rpOf(w));
  const signed = await call(w, "/signin", { json: { response }, cookie: pending });
  if (signed.status !== 200) throw new Error(`sign-in: ${signed.status} ${await signed.text()}`);
  // Over https the session is a __Host- cookie.
  const cookie = (cookieFrom(signed, "__Host-twinlock_session") ?? cookieFrom(signed, "twinlock_session")) as string;
  const page = await (await call(w, "/", { cookie, headers: { accept: "text/html" } })).text();
  const csrf = /<meta name="csrf-token" content="([^"]*)">/.exec(page)?.[1] ?? "";
  return { name, authenticator, cookie, csrf };
}

/** Enrol and sign in. */
export async function reviewerFor(w: ServerWorld, name: string, rights?: string[]): Promise<Reviewer> {
  return signIn(w, name, await enrol(w, name, rights));
}

/** The first half of a passkey decision: the challenge response (status and body). */
export async function askChallenge(w: ServerWorld, r: Reviewer, url: string, fields: Record<string, unknown>) {
  return jsonOf(await call(w, `${url}/challenge`, { json: fields, cookie: r.cookie, csrf: r.csrf }));
}

/** The second half: sign the challenge with `signer` (default the reviewer's own passkey) and complete. */
export async function complete(
  w: ServerWorld,
  r: Reviewer,
  url: string,
  fields: Record<string, unknown>,
  challenge: { challenge_id: string; options: { challenge: string } },
  signer: SoftwareAuthenticator = r.authenticator,
  tweaks: Parameters<SoftwareAuthenticator["assert"]>[2] = {},
) {
  const assertion = signer.assert(challenge.options.challenge, rpOf(w), tweaks);
  return jsonOf(
    await call(w, url, {
      json: { ...fields, challenge_id: challenge.challenge_id, assertion: JSON.stringify(assertion) },
      cookie: r.cookie,
      csrf: r.csrf,
    }),
  );
}

/** A whole passkey decision (challenge, then the signed answer); the completing response. */
export async function decide(w: ServerWorld, r: Reviewer, url: string, fields: Record<string, unknown>) {
  const asked = await askChallenge(w, r, url, fields);
  if (asked.status !== 200) return asked;
  return complete(w, r, url, fields, asked.body as never);
}

/** The pair's workflow as the verified run says now. */
export function workflowNow(w: ServerWorld): Workflow {
  return readRun(w.runFile, w.home).state.workflows[PLANNER] as Workflow;
}

/** The current frozen hash. */
export function hashNow(w: ServerWorld): string {
  return workflowNow(w).handoff?.hash as string;
}

/** One more line in the handoff's report, so the next freeze is a new revision. */
export function editReport(w: ServerWorld, note = "revised"): void {
  const file = path.join(w.handoff, "report.md");
  writeFileSync(file, `${readFileSync(file, "utf8")}\n${note}\n`);
}

/** API paths of the fixture's run. */
export function apiOf(w: ServerWorld) {
  // The server's own path table, filled in with this world's run and pair.
  return {
    run: apiPaths.run(w.runId),
    pair: apiPaths.pair(w.runId, PLANNER),
    plan: apiPaths.plan(w.runId, PLANNER),
    freeze: apiPaths.freeze(w.runId, PLANNER),
    review: apiPaths.review(w.runId, PLANNER),
    consent: apiPaths.consent(w.runId, PLANNER),
    apply: apiPaths.applyApproval(w.runId, PLANNER),
    result: apiPaths.result(w.runId, PLANNER),
    admission: apiPaths.admissionCheck(w.runId, EXECUTOR),
    stops: apiPaths.stops(w.runId),
    lift: apiPaths.liftStop(w.runId),
  };
}

/**
 * The common road to an admissible pair: the agent freezes the handoff with
 * its token, then the reviewer approves that revision and consents with
 * their passkey (on a signing suite the token signs the freeze with the
 * planner's key). Throws with the server's answer if any step is refused.
 */
export async function freezeApproveConsent(w: ServerWorld, r: Reviewer): Promise<void> {
  const { token } = await createAgentToken(w.home, { agent: "planner-agent", runId: w.runId, freezeKey: w.plannerKey });
  const frozen = await call(w, apiOf(w).freeze, { token, json: { handoff_dir: w.handoff } });
  if (frozen.status !== 200) throw new Error(`freeze: ${frozen.status} ${await frozen.text()}`);
  const steps: Array<[string, Record<string, unknown>]> = [
    [apiOf(w).review, { handoff_hash: hashNow(w), decision: "approved" }],
    [apiOf(w).consent, { handoff_hash: hashNow(w), approve: true, mode: "APPLY_SAFE", environment: "staging" }],
  ];
  for (const [url, fields] of steps) {
    const answer = await decide(w, r, url, fields);
    if (answer.status !== 200) throw new Error(`${url}: ${answer.status} ${JSON.stringify(answer.body)}`);
  }
}

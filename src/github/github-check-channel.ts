import type { KeyObject } from "node:crypto";
import { redactSecrets } from "../errors/redact-secrets.js";
import type { DeliveryChannel, DeliveryOutcome } from "../gate/deliver-notifications.js";
import type { RunState } from "../run/run-schema.js";
import type { RunStore } from "../store/run-store.js";
import { VERSION } from "../version.js";
import { signAppJwt } from "./app-jwt.js";
import { CHECK_NAME, type CheckRunUpdate, checkRunOf, uncoveredCheck, verifiedCommitOf } from "./check-run-of.js";

/** How `serve --github-app` reaches GitHub: all of it the operator's, none of it from a run. */
export interface GitHubAppConfig {
  /** The app's numeric ID (the JWT's `iss`). */
  appId: string;
  key: KeyObject;
  /** The installation whose token posts the checks (its repositories and `checks: write`). */
  installationId: string;
  /** The REST API's base, `https://api.github.com` or a GitHub Enterprise Server's `https://HOST/api/v3`; no trailing slash. */
  apiBase: string;
  /** `OWNER/REPO` as the operator wrote them: a run's change is posted only when its repository is one of these. */
  repositories: readonly string[];
}

/** Most bytes of one GitHub answer read (a pull request's JSON is tens of kB); the rest is never read. */
const MAX_ANSWER_BYTES = 1024 * 1024;
/** Most check runs remembered (run and head commit → check run ID); past it the oldest is forgotten and a new one made. */
const MAX_REMEMBERED = 10_000;
const SHA = /^[0-9a-f]{40}$/;

class GitHubError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

/**
 * The GitHub check run as a channel of the notification outbox: each entry,
 * in the run's order, sets the run's check on its change's current head
 * commit (created on the first, updated after); a run's success goes only on
 * the commit its verified closes recorded, and a head past it is told so. What is posted is read from
 * the gate's run and the operator's configuration: the request's host and
 * repository are the operator's (`--github-api`, `--github-repo`), the head
 * commit is GitHub's own answer, the status and conclusion `checkRunOf`'s.
 * A run without `--for-change`, or for a repository not configured, has no
 * check (its entries are delivered as nothing to post). The gate never reads
 * the check back: a failed or slow GitHub delays only its own entries.
 */
export function gitHubCheckChannel(o: {
  config: GitHubAppConfig;
  store: RunStore;
  /** The origin the gate's pages are at (`serve --origin`); undefined until the server listens (the entry waits). */
  origin: string | (() => string | undefined);
  fetch?: typeof fetch;
  now?: () => number;
}): DeliveryChannel {
  const doFetch = o.fetch ?? fetch;
  const now = o.now ?? Date.now;
  const repos = new Map(o.config.repositories.map((r) => [r.toLowerCase(), r]));
  const checkRuns = new Map<string, number>();
  let token: { value: string; expiresMs: number } | undefined;

  const call = async (method: string, path: string, auth: string, body: unknown, signal: AbortSignal): Promise<Record<string, unknown>> => {
    let response: Response;
    try {
      response = await doFetch(`${o.config.apiBase}${path}`, {
        method,
        redirect: "manual",
        signal,
        headers: {
          accept: "application/vnd.github+json",
          authorization: `Bearer ${auth}`,
          "x-github-api-version": "2022-11-28",
          "user-agent": `twinlock/${VERSION}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      if (signal.aborted) throw new GitHubError("no answer in time (or the server is stopping)", false);
      const cause = (error as { cause?: { code?: string } }).cause;
      throw new GitHubError(`GitHub not reached (${cause?.code ?? (error as Error).name})`, false);
    }
    const text = await readCapped(response, MAX_ANSWER_BYTES).catch(() => "");
    // The route's name, never its values: the path can hold a branch name.
    const route = `${method} ${path.split("/").slice(0, 3).join("/")}/…`;
    if (response.status === 401) token = undefined; // an expired or revoked installation token: the next try makes a new one
    if (response.status < 200 || response.status >= 300) {
      const retry = response.status >= 500 || [401, 403, 408, 409, 425, 429].includes(response.status);
      throw new GitHubError(`GitHub answered ${route} with HTTP ${response.status}`, !retry);
    }
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    } catch {
      // fall through
    }
    throw new GitHubError(`GitHub answered ${route} with no JSON object (or one over ${MAX_ANSWER_BYTES} bytes)`, false);
  };

  const installationToken = async (signal: AbortSignal): Promise<string> => {
    if (token && token.expiresMs - now() > 5 * 60_000) return token.value;
    const jwt = signAppJwt(o.config.appId, o.config.key, now());
    const answer = await call("POST", `/app/installations/${o.config.installationId}/access_tokens`, jwt, {}, signal);
    const value = answer.token;
    const expires = typeof answer.expires_at === "string" ? Date.parse(answer.expires_at) : Number.NaN;
    if (typeof value !== "string" || value === "" || value.length > 4096)
      throw new GitHubError("GitHub's installation token answer has no token", false);
    token = { value, expiresMs: Number.isFinite(expires) ? expires : now() + 55 * 60_000 };
    return value;
  };

  const findCheckRun = async (
    repo: string,
    head: string,
    runId: string,
    auth: string,
    signal: AbortSignal,
  ): Promise<number | undefined> => {
    const query = `check_name=${encodeURIComponent(CHECK_NAME)}&app_id=${o.config.appId}&filter=all&per_page=100`;
    const listed = await call("GET", `/repos/${repo}/commits/${head}/check-runs?${query}`, auth, undefined, signal);
    const runs = Array.isArray(listed.check_runs) ? (listed.check_runs as Array<Record<string, unknown>>) : [];
    const mine = runs.find((r) => r.external_id === runId && typeof r.id === "number" && Number.isSafeInteger(r.id) && r.id > 0);
    return mine?.id as number | undefined;
  };

  return async (entry, _webhook, signal): Promise<DeliveryOutcome> => {
    try {
      const ref = await o.store.resolve(entry.run_id);
      if (ref === undefined) return { ok: true }; // the run is gone: nothing to tell
      const state: RunState = (await o.store.read(ref)).state;
      const origin = typeof o.origin === "string" ? o.origin : o.origin();
      if (origin === undefined) return { ok: false, error: "the server is not listening yet" };
      const update = checkRunOf(entry.notification, state, origin);
      const change = state.change === undefined ? undefined : splitChange(state.change);
      const repo = change ? repos.get(change.repository.toLowerCase()) : undefined;
      if (!update || !change || !repo) return { ok: true }; // no check for this run: delivered as nothing to post
      const auth = await installationToken(signal);
      const head =
        change.pull !== undefined
          ? ((await call("GET", `/repos/${repo}/pulls/${change.pull}`, auth, undefined, signal)).head as { sha?: unknown } | undefined)?.sha
          : (
              (await call("GET", `/repos/${repo}/branches/${encodeURIComponent(change.branch)}`, auth, undefined, signal)).commit as
                | { sha?: unknown }
                | undefined
            )?.sha;
      if (typeof head !== "string" || !SHA.test(head)) throw new GitHubError("GitHub's answer names no head commit for the change", false);
      const post = async (commit: string, u: CheckRunUpdate): Promise<void> => {
        const at = new Date(now()).toISOString();
        const fields = {
          name: CHECK_NAME,
          details_url: u.details_url,
          external_id: state.run_id,
          status: u.status,
          ...(u.conclusion ? { conclusion: u.conclusion, completed_at: at } : {}),
          output: { title: u.title, summary: u.summary },
        };
        const key = `${state.run_id}\u0000${commit}`;
        // Another server on the store (or this one before a restart) may have made the check: found on the commit by
        // this app's check runs of this name, its external_id the run's, so the commit keeps one check per run.
        const remember = (id: number) => {
          if (checkRuns.has(key)) return;
          if (checkRuns.size >= MAX_REMEMBERED) checkRuns.delete(checkRuns.keys().next().value as string);
          checkRuns.set(key, id);
        };
        // A check found on the commit is remembered as a made one is: later updates of it ask GitHub's list no more.
        const known = checkRuns.get(key) ?? (await findCheckRun(repo, commit, state.run_id, auth, signal));
        if (known !== undefined) {
          await call("PATCH", `/repos/${repo}/check-runs/${known}`, auth, fields, signal);
          remember(known);
        } else {
          const made = await call("POST", `/repos/${repo}/check-runs`, auth, { ...fields, head_sha: commit, started_at: at }, signal);
          if (typeof made.id !== "number" || !Number.isSafeInteger(made.id) || made.id < 1)
            throw new GitHubError("GitHub's answer to the new check run has no ID", false);
          remember(made.id);
        }
      };
      if (update.conclusion === "success") {
        // Success is the closes' word on the commit they judged, never on whatever head the change has by now:
        // a head the closes did not cover is told so (neutral), before the green goes on the judged commit.
        const recorded = verifiedCommitOf(state);
        const verified = recorded !== undefined && SHA.test(recorded) ? recorded : undefined;
        if (verified !== head) await post(head, uncoveredCheck(update, verified));
        if (verified !== undefined) await post(verified, update);
      } else await post(head, update);
      return { ok: true };
    } catch (error) {
      if (error instanceof GitHubError) return { ok: false, error: error.message, permanent: error.permanent };
      return { ok: false, error: redactSecrets((error as Error).message) };
    }
  };
}

/** A change ref (`OWNER/REPO#N` or `OWNER/REPO@BRANCH`, already held to CHANGE_REF_PATTERN by the run's schema) in parts. */
function splitChange(change: string): { repository: string; pull?: number; branch: string } | undefined {
  const hash = change.indexOf("#");
  const at = change.indexOf("@");
  if (hash !== -1) return { repository: change.slice(0, hash), pull: Number(change.slice(hash + 1)), branch: "" };
  if (at !== -1) return { repository: change.slice(0, at), branch: change.slice(at + 1) };
  return undefined;
}

/** Read at most `cap` bytes of an answer as text; past the cap it is cut off (and fails to parse). */
async function readCapped(response: Response, cap: number): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let read = 0;
  try {
    while (read <= cap) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      read += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
  return read > cap ? "" : Buffer.concat(chunks).toString("utf8");
}

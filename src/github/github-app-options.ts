import { readFileSync } from "node:fs";
import { UsageError } from "../errors/errors.js";
import { NOTIFICATION_KIND_NAMES } from "../notify/notification-kinds.js";
import { newWebhookId, newWebhookSecret, type Webhook } from "../notify/webhook.js";
import type { RunStore } from "../store/run-store.js";
import { parseAppPrivateKey } from "./app-jwt.js";
import type { GitHubAppConfig } from "./github-check-channel.js";

/** `serve`'s GitHub App options, as given. */
export interface GitHubAppFlags {
  githubApp?: string;
  githubAppKey?: string;
  githubInstallation?: string;
  githubRepo?: string[];
  githubApi?: string;
}

const DIGITS = /^[1-9][0-9]{0,19}$/;
const REPO = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\/[A-Za-z0-9_.-]{1,100}$/;
/** Largest app key file read (an RSA key's PEM is under 4 kB). */
const MAX_KEY_BYTES = 64 * 1024;

/**
 * `--github-app ID --github-app-key PEM --github-installation ID
 * --github-repo OWNER/REPO… [--github-api URL]` as the check channel's
 * configuration; undefined without `--github-app`; a UsageError for anything
 * missing or malformed (one line, nothing started).
 */
export function parseGitHubAppFlags(f: GitHubAppFlags): GitHubAppConfig | undefined {
  const given = [f.githubAppKey, f.githubInstallation, f.githubApi].some((v) => v !== undefined) || (f.githubRepo ?? []).length > 0;
  if (f.githubApp === undefined) {
    if (given) throw new UsageError("--github-app-key, --github-installation, --github-repo and --github-api go with --github-app ID");
    return undefined;
  }
  if (!DIGITS.test(f.githubApp))
    throw new UsageError(
      `--github-app ${JSON.stringify(f.githubApp.slice(0, 40))} is not an app ID; give the number on the app's settings page`,
    );
  if (f.githubInstallation === undefined || !DIGITS.test(f.githubInstallation))
    throw new UsageError("--github-installation ID is needed with --github-app: the number in the installation's settings URL");
  if (f.githubAppKey === undefined) throw new UsageError("--github-app-key FILE is needed with --github-app: the app's private key (.pem)");
  const repositories = f.githubRepo ?? [];
  if (repositories.length === 0)
    throw new UsageError("--github-repo OWNER/REPO is needed with --github-app (repeatable): the repositories whose runs get a check");
  for (const r of repositories)
    if (!REPO.test(r)) throw new UsageError(`--github-repo ${JSON.stringify(r.slice(0, 80))} is not OWNER/REPO`);
  let pem: Buffer;
  try {
    pem = readFileSync(f.githubAppKey);
  } catch (error) {
    throw new UsageError(
      `--github-app-key ${f.githubAppKey} cannot be read (${(error as NodeJS.ErrnoException).code}); give the app's .pem file`,
    );
  }
  if (pem.length > MAX_KEY_BYTES)
    throw new UsageError(`--github-app-key ${f.githubAppKey} is over ${MAX_KEY_BYTES} bytes; give the app's .pem file`);
  return {
    appId: f.githubApp,
    key: parseAppPrivateKey(pem, `--github-app-key ${f.githubAppKey}`),
    installationId: f.githubInstallation,
    apiBase: parseApiBase(f.githubApi ?? "https://api.github.com"),
    repositories,
  };
}

/** `--github-api URL`: https (http only to a loopback address, for a local stand-in), no query or fragment; without its trailing slash. */
export function parseApiBase(text: string): string {
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new UsageError(
      `--github-api ${JSON.stringify(text.slice(0, 200))} is not a URL; give https://api.github.com or https://HOST/api/v3`,
    );
  }
  const loopback = ["127.0.0.1", "[::1]", "localhost"].includes(u.hostname);
  if (u.protocol !== "https:" && !(u.protocol === "http:" && loopback))
    throw new UsageError(
      `--github-api ${u.protocol}//${u.host} is not https (plain http only to a loopback address); give the https:// API address`,
    );
  if (u.search !== "" || u.hash !== "" || u.username !== "" || u.password !== "")
    throw new UsageError("--github-api has no query, fragment or user name; give https://api.github.com or https://HOST/api/v3");
  return `${u.origin}${u.pathname.replace(/\/+$/, "")}`;
}

/**
 * The store's one `github-check` webhook, added when there is none: the
 * outbox then keeps the check's notifications beside the others (in order,
 * retried, across restarts). A server started without `--github-app` leaves
 * them waiting.
 */
export async function ensureCheckWebhook(store: RunStore, apiBase: string, now: Date): Promise<Webhook> {
  const existing = (await store.notifications.listWebhooks()).find((w) => w.format === "github-check");
  if (existing) return existing;
  const webhook: Webhook = {
    id: newWebhookId(),
    url: apiBase,
    events: [...NOTIFICATION_KIND_NAMES],
    format: "github-check",
    secret: newWebhookSecret(),
    created_at: now.toISOString(),
  };
  await store.notifications.addWebhook(webhook);
  return webhook;
}

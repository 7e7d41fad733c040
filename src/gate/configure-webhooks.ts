import { UsageError } from "../errors/errors.js";
import { readRegularFile } from "../input/read-regular-file.js";
import {
  describeWebhook,
  newWebhookId,
  newWebhookSecret,
  parseNotificationKinds,
  parseWebhookFormat,
  parseWebhookUrl,
  WEBHOOK_ID_PATTERN,
  type Webhook,
} from "../notify/webhook.js";
import type { OutboxBacklog } from "../store/notification-outbox.js";
import type { RunStore } from "../store/run-store.js";

/** Longest secret file read. */
const MAX_SECRET_BYTES = 1024;

/** What `notify add` is given. */
export interface AddWebhookRequest {
  url: string;
  events?: string;
  format?: string;
  /** A file holding the signing secret (`whsec_…`, base64); else a new one is made. */
  secretFile?: string;
  now?: Date;
}

/**
 * Add a webhook to the store's configuration (gate home or database): the
 * URL http(s) only, the events named, the secret read from a file or made
 * here. Returns the webhook, secret included: the caller shows it once.
 */
export async function addWebhook(store: RunStore, request: AddWebhookRequest): Promise<Webhook> {
  const webhook: Webhook = {
    id: newWebhookId(),
    url: parseWebhookUrl(request.url),
    events: parseNotificationKinds(request.events ?? "all"),
    format: parseWebhookFormat(request.format),
    secret: request.secretFile === undefined ? newWebhookSecret() : readSecret(request.secretFile),
    created_at: (request.now ?? new Date()).toISOString(),
  };
  await store.home.shared?.refresh();
  await store.notifications.addWebhook(webhook);
  return webhook;
}

/** Every webhook as it may be shown (URL redacted, no secret), with what waits for it. */
export async function listWebhooks(
  store: RunStore,
): Promise<Array<ReturnType<typeof describeWebhook> & { pending: number; failed: number; last_error: string | null }>> {
  const [webhooks, backlog] = await Promise.all([store.notifications.listWebhooks(), store.notifications.backlog()]);
  const by = new Map<string, OutboxBacklog>(backlog.map((b) => [b.webhook_id, b]));
  return webhooks.map((w) => ({
    ...describeWebhook(w),
    pending: by.get(w.id)?.pending ?? 0,
    failed: by.get(w.id)?.failed ?? 0,
    last_error: by.get(w.id)?.last_error ?? null,
  }));
}

/** Remove a webhook and what waits for it; a UsageError when there is none by that ID. */
export async function removeWebhook(store: RunStore, id: string): Promise<void> {
  if (!WEBHOOK_ID_PATTERN.test(id))
    throw new UsageError(`${JSON.stringify(id.slice(0, 40))} is not a webhook ID (wh_ and 16 hex digits); see twinlock notify list`);
  if (!(await store.notifications.removeWebhook(id))) throw new UsageError(`there is no webhook ${id}; see twinlock notify list`);
}

function readSecret(file: string): string {
  const text = readRegularFile(file, "the secret file", { maxBytes: MAX_SECRET_BYTES }).toString("utf8").trim();
  const raw = text.startsWith("whsec_") ? text.slice("whsec_".length) : text;
  const key = /^[A-Za-z0-9+/]{16,}={0,2}$/.test(raw) ? Buffer.from(raw, "base64") : Buffer.alloc(0);
  if (key.length < 16)
    throw new UsageError(
      `the secret file ${file} does not hold a Standard Webhooks secret (whsec_ and base64 of at least 16 bytes); leave --secret-file out to have one made`,
    );
  return `whsec_${key.toString("base64")}`;
}

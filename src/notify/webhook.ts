import { randomBytes } from "node:crypto";
import { UsageError } from "../errors/errors.js";
import { redactStoreUrl } from "../errors/redact-secrets.js";
import { isNotificationKind, NOTIFICATION_KIND_NAMES, type NotificationKind } from "./notification-kinds.js";

/** The formats a webhook's body can take: Standard Webhooks JSON, a Slack message, a Teams message. */
export const WEBHOOK_FORMATS = ["json", "slack", "teams"] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

/**
 * Formats delivered by a channel of their own, not by POSTing a body
 * (`serve --github-app` registers the GitHub check run's): never offered to
 * `notify add`, and waiting in the outbox while no server delivers them.
 */
export const CHANNEL_FORMATS = ["github-check"] as const;
export type ChannelFormat = (typeof CHANNEL_FORMATS)[number];

/** Whether a webhook's format is a channel's (see CHANNEL_FORMATS). */
export function isChannelFormat(format: string): format is ChannelFormat {
  return (CHANNEL_FORMATS as readonly string[]).includes(format);
}

/** One configured receiver. `secret` signs every delivery and stays in the gate home or database. */
export interface Webhook {
  id: string;
  url: string;
  events: NotificationKind[];
  format: WebhookFormat | ChannelFormat;
  /** `whsec_` and base64 of the key bytes (Standard Webhooks' form). */
  secret: string;
  created_at: string;
}

export const WEBHOOK_ID_PATTERN = /^wh_[0-9a-f]{16}$/;
/** Longest webhook URL accepted (Slack's and Teams' are under 300 characters). */
const MAX_URL_CHARS = 2048;

/** A new webhook ID. */
export function newWebhookId(): string {
  return `wh_${randomBytes(8).toString("hex")}`;
}

/** A new signing secret: 32 random bytes as Standard Webhooks writes them. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}

/** `text` as a webhook URL: http or https only, no fragment, no longer than 2048 characters; a UsageError otherwise. */
export function parseWebhookUrl(text: string): string {
  if (text.length > MAX_URL_CHARS) throw new UsageError(`the webhook URL is ${text.length} characters; give one under ${MAX_URL_CHARS}`);
  let u: URL;
  try {
    u = new URL(text);
  } catch {
    throw new UsageError(`${JSON.stringify(redactWebhookUrl(text))} is not a URL; give the receiver's https:// address`);
  }
  if (u.protocol !== "https:" && u.protocol !== "http:")
    throw new UsageError(`a webhook is sent only over http or https, not ${u.protocol}; give the receiver's https:// address`);
  if (u.hash !== "") throw new UsageError("a webhook URL has no #fragment; give the receiver's address without it");
  return u.toString();
}

/**
 * A webhook URL as messages show it: scheme and host only (the store
 * redaction, then the path hidden), since Slack's and Teams' URLs carry their
 * secret in the path.
 */
export function redactWebhookUrl(url: string): string {
  try {
    const u = new URL(url);
    const userinfo = u.username !== "" || u.password !== "" ? "user:x@" : "";
    const shown = redactStoreUrl(`${u.protocol}//${userinfo}${u.host}`);
    return u.pathname === "/" && u.search === "" ? shown : `${shown}/…`;
  } catch {
    return "(a URL, not shown)";
  }
}

/** `--events a,b` (or `all`) as kinds, refusing an unknown one by name with the list. */
export function parseNotificationKinds(text: string): NotificationKind[] {
  const names = text
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (names.length === 0 || (names.length === 1 && names[0] === "all")) return [...NOTIFICATION_KIND_NAMES];
  const unknown = names.filter((n) => !isNotificationKind(n));
  if (unknown.length > 0)
    throw new UsageError(
      `--events ${unknown.map((u) => JSON.stringify(u.slice(0, 40))).join(", ")} ${unknown.length === 1 ? "is" : "are"} not a notification; give some of ${NOTIFICATION_KIND_NAMES.join(", ")}, or all`,
    );
  return [...new Set(names as NotificationKind[])];
}

/** `--format`, refusing anything else. */
export function parseWebhookFormat(text: string | undefined): WebhookFormat {
  const format = text ?? "json";
  if (!(WEBHOOK_FORMATS as readonly string[]).includes(format))
    throw new UsageError(`--format ${JSON.stringify(format.slice(0, 40))} is not one of ${WEBHOOK_FORMATS.join(", ")}`);
  return format as WebhookFormat;
}

/** A webhook as `notify list` shows it: the URL redacted, the secret never. */
export function describeWebhook(w: Webhook): {
  id: string;
  url: string;
  events: NotificationKind[];
  format: WebhookFormat | ChannelFormat;
  created_at: string;
} {
  return { id: w.id, url: redactWebhookUrl(w.url), events: w.events, format: w.format, created_at: w.created_at };
}

import { NOTIFICATION_KINDS, type Notification } from "./notification-kinds.js";
import type { WebhookFormat } from "./webhook.js";

/** How long a piece of agent- or reviewer-written text may be in a notification (feedback, a title). */
const MAX_TEXT = 500;

/**
 * The page a notification links to: a revision's review page when it has a
 * revision, else the pair's page, else the run's. Only a page: a decision is
 * made there, signed with the person's passkey, never from a notification.
 */
export function pageLinkOf(n: Notification, origin: string): string {
  const run = `${origin}/runs/${encodeURIComponent(n.run_id)}`;
  if (n.planner === null) return run;
  const pair = `${run}/pairs/${encodeURIComponent(n.planner)}`;
  return n.revision !== null && n.type.startsWith("plan.") ? `${pair}/revisions/${n.revision}` : pair;
}

/** The body of one delivery in a webhook's format. */
export function formatNotification(n: Notification, format: WebhookFormat, origin: string): string {
  const link = pageLinkOf(n, origin);
  if (format === "slack") return JSON.stringify(slackMessage(n, link));
  if (format === "teams") return JSON.stringify(teamsMessage(n, link));
  // Standard Webhooks' recommended shape: type, timestamp, data.
  return JSON.stringify({ type: `twinlock.${n.type}`, timestamp: n.at, data: { ...n, detail: clip(n.detail), url: link } });
}

/** The longest a field from the run may be in a Slack or Teams message: IDs and names, titles, free text (feedback, a reason). */
const MAX_ID = 80;
const MAX_TITLE = 160;

/** Characters that end or break a line, or hide text: each run of them (and of spaces) is one space in a field. */
const LINE_BREAKING = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\s]+/gu;

/**
 * A value from the run, the suite or an actor's name as it may stand in a
 * Slack or Teams message: one line (control characters and line breaks are
 * one space), at most `max` characters, and never a link — `://` and
 * every dot are look-alikes (`∕∕`, `․`), so neither an
 * address nor a bare domain is made clickable. The page link the gate builds
 * from `serve --origin` is the message's only link. (The JSON format keeps
 * the raw values: a program reads them.)
 */
export function fieldText(text: string, max: number = MAX_TEXT): string {
  // Bounded before any pattern runs: agent text may be as long as the run file allows.
  const line = text
    .slice(0, max * 4)
    .replace(LINE_BREAKING, " ")
    .trim();
  const chars = Array.from(line);
  const clipped = chars.length > max ? `${chars.slice(0, max).join("")}…` : line;
  return clipped.replace(/:\/\//g, ":\u2215\u2215").replace(/\./g, "\u2024");
}

/** The one-line summary every format leads with, each part from the run in `quote`. */
function headline(n: Notification, quote: (text: string, max: number) => string): string {
  const pair = n.planner !== null ? ` ${quote(n.planner, MAX_ID)}${n.executor ? ` → ${quote(n.executor, MAX_ID)}` : ""}` : "";
  return `twinlock: ${NOTIFICATION_KINDS[n.type].words}${pair} (run ${quote(n.run_id, MAX_ID)})`;
}

/** The facts as label/value pairs: run, pair, revision, hash prefix, who is asked; each value from the run in `quote`. */
function facts(n: Notification, quote: (text: string, max: number) => string): Array<[string, string]> {
  const rows: Array<[string, string]> = [["Run", quote(n.run_id, MAX_ID)]];
  if (n.planner !== null) rows.push(["Pair", `${quote(n.planner, MAX_ID)}${n.executor ? ` → ${quote(n.executor, MAX_ID)}` : ""}`]);
  if (n.executor_title) rows.push(["Executor", quote(n.executor_title, MAX_TITLE)]);
  if (n.revision !== null) rows.push(["Revision", String(n.revision)]);
  if (n.handoff_hash !== null) rows.push(["Hash", `${quote(n.handoff_hash.slice(0, 19), MAX_ID)}…`]);
  rows.push(["Asked", n.asked]);
  rows.push(["By", quote(n.by, MAX_ID)]);
  if (n.detail) rows.push(["Detail", quote(n.detail, MAX_TEXT)]);
  return rows;
}

/** Slack's mrkdwn escapes only these three; with them escaped, `<url|text>` and `<@mention>` cannot be written. */
function slackText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A field in Slack: one line in inline code (no bold, no link, no mention inside it); a backtick in it is a look-alike. */
function slackField(text: string, max: number): string {
  return `\`${slackText(fieldText(text, max).replace(/`/g, "\u02cb"))}\``;
}

/** A Slack incoming-webhook message: a section of facts and the page's address as text. No buttons, no actions block. */
function slackMessage(n: Notification, link: string) {
  const lines = facts(n, slackField).map(([k, v]) => `*${k}:* ${v}`);
  const title = headline(n, slackField);
  return {
    text: title,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: `*${title}*` } },
      { type: "section", text: { type: "mrkdwn", text: lines.join("\n") } },
      {
        type: "context",
        elements: [{ type: "mrkdwn", text: `Open the page to decide (signed with your passkey there): <${link}|${slackText(link)}>` }],
      },
    ],
  };
}

/** A field in Teams: one line with its Markdown escaped (Adaptive Cards have no inline code). */
function teamsField(text: string, max: number): string {
  return plain(fieldText(text, max));
}

/** A Teams incoming-webhook message: an Adaptive Card of facts and the page's address as text. No actions. */
function teamsMessage(n: Notification, link: string) {
  return {
    type: "message",
    attachments: [
      {
        contentType: "application/vnd.microsoft.card.adaptive",
        content: {
          $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
          type: "AdaptiveCard",
          version: "1.4",
          body: [
            { type: "TextBlock", text: headline(n, teamsField), weight: "Bolder", wrap: true },
            { type: "FactSet", facts: facts(n, teamsField).map(([title, value]) => ({ title, value })) },
            { type: "TextBlock", text: `Open the page to decide (signed with your passkey there): ${link}`, wrap: true },
          ],
        },
      },
    ],
  };
}

/** Teams renders a subset of Markdown in TextBlocks: its link, emphasis, list and escape characters are escaped. */
function plain(text: string): string {
  return text.replace(/[\\[\]()*_~`<>#!-]/g, (c) => `\\${c}`);
}

function clip(text: string | null): string | null {
  if (text === null) return null;
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

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

/** The one-line summary every format leads with. */
function headline(n: Notification): string {
  const pair = n.planner !== null ? ` ${n.planner}${n.executor ? `→${n.executor}` : ""}` : "";
  return `twinlock: ${NOTIFICATION_KINDS[n.type].words}${pair} (run ${n.run_id})`;
}

/** The facts as label/value pairs: run, pair, revision, hash prefix, who is asked. */
function facts(n: Notification): Array<[string, string]> {
  const rows: Array<[string, string]> = [["Run", n.run_id]];
  if (n.planner !== null) rows.push(["Pair", `${n.planner}${n.executor ? ` → ${n.executor}` : ""}`]);
  if (n.executor_title) rows.push(["Executor", clip(n.executor_title) as string]);
  if (n.revision !== null) rows.push(["Revision", String(n.revision)]);
  if (n.handoff_hash !== null) rows.push(["Hash", `${n.handoff_hash.slice(0, 19)}…`]);
  rows.push(["Asked", n.asked]);
  rows.push(["By", clip(n.by) as string]);
  if (n.detail) rows.push(["Detail", clip(n.detail) as string]);
  return rows;
}

/** Slack's mrkdwn escapes only these three; text from a run never becomes a link or a mention. */
function slackText(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A Slack incoming-webhook message: a section of facts and the page's address as text. No buttons, no actions block. */
function slackMessage(n: Notification, link: string) {
  const lines = facts(n).map(([k, v]) => `*${k}:* ${slackText(v)}`);
  return {
    text: slackText(headline(n)),
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: `*${slackText(headline(n))}*` } },
      { type: "section", text: { type: "mrkdwn", text: lines.join("\n") } },
      {
        type: "context",
        elements: [{ type: "mrkdwn", text: `Open the page to decide (signed with your passkey there): <${link}|${slackText(link)}>` }],
      },
    ],
  };
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
            { type: "TextBlock", text: plain(headline(n)), weight: "Bolder", wrap: true },
            { type: "FactSet", facts: facts(n).map(([title, value]) => ({ title, value: plain(value) })) },
            { type: "TextBlock", text: `Open the page to decide (signed with your passkey there): ${link}`, wrap: true },
          ],
        },
      },
    ],
  };
}

/** Teams renders a subset of Markdown in TextBlocks: its link and emphasis characters are escaped. */
function plain(text: string): string {
  return text.replace(/[[\]()*_~`<>]/g, (c) => `\\${c}`);
}

function clip(text: string | null): string | null {
  if (text === null) return null;
  return text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}…` : text;
}

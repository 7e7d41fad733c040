import { addWebhook, listWebhooks, removeWebhook } from "../../gate/configure-webhooks.js";
import { redactWebhookUrl } from "../../notify/webhook.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";

/**
 * `twinlock notify add URL`: a webhook in the gate home (or, with --store,
 * the team database), told of the events named, signed with a secret
 * printed here once and kept where no agent reads it.
 */
export async function runNotifyAdd(
  url: string,
  o: CommonOptions & { events?: string; format?: string; secretFile?: string },
): Promise<CommandResult> {
  const store = storeOption(o);
  try {
    await store.ready();
    const w = await addWebhook(store, { url, events: o.events, format: o.format, secretFile: o.secretFile });
    const shown = redactWebhookUrl(w.url);
    return {
      exitCode: 0,
      text: [
        `added webhook ${w.id} → ${shown} (${w.format}; ${w.events.join(", ")})`,
        o.secretFile === undefined
          ? `signing secret (shown once; give it to the receiver to verify webhook-signature): ${w.secret}`
          : "signing with the secret from the file given",
        "twinlock serve delivers it (at least once, retried; the receiver de-duplicates by webhook-id)",
      ].join("\n"),
      json: {
        ok: true,
        webhook: { id: w.id, url: shown, events: w.events, format: w.format, created_at: w.created_at },
        ...(o.secretFile === undefined ? { secret: w.secret } : {}),
      },
    };
  } finally {
    await store.close();
  }
}

/** `twinlock notify list`: every webhook (URL redacted, never its secret) and what waits for it. */
export async function runNotifyList(o: CommonOptions): Promise<CommandResult> {
  const store = storeOption(o);
  try {
    await store.ready();
    const hooks = await listWebhooks(store);
    const text =
      hooks.length === 0
        ? "no webhooks (add one: twinlock notify add URL --events all)"
        : hooks
            .map(
              (h) =>
                `${h.id}  ${h.url}  ${h.format}  ${h.events.join(",")}  ${h.pending} waiting${h.failed ? `, ${h.failed} failed for good` : ""}${h.last_error ? ` (last try: ${h.last_error})` : ""}`,
            )
            .join("\n");
    return { exitCode: 0, text, json: { ok: true, webhooks: hooks } };
  } finally {
    await store.close();
  }
}

/** `twinlock notify remove ID`: the webhook and every delivery waiting for it. */
export async function runNotifyRemove(id: string, o: CommonOptions): Promise<CommandResult> {
  const store = storeOption(o);
  try {
    await store.ready();
    await removeWebhook(store, id);
    return { exitCode: 0, text: `removed webhook ${id} and the deliveries waiting for it`, json: { ok: true, removed: id } };
  } finally {
    await store.close();
  }
}

import { redactSecrets } from "../errors/redact-secrets.js";
import { formatNotification } from "../notify/format-notification.js";
import { onOutboxRing } from "../notify/outbox-signal.js";
import { signDelivery } from "../notify/sign-delivery.js";
import { isChannelFormat, type Webhook } from "../notify/webhook.js";
import { GAVE_UP, type OutboxEntry } from "../store/notification-outbox.js";
import type { RunStore } from "../store/run-store.js";
import { VERSION } from "../version.js";

/** How `serve` delivers the outbox. Every bound has a default; tests and the bench shorten them. */
export interface NotifierOptions {
  store: RunStore;
  /** The origin people open (`serve --origin`): notifications link to its pages. */
  origin: string;
  /**
   * Most deliveries in flight at once. Each (run, webhook) has at most one
   * (its order), and each webhook at most half of them (a hostile receiver
   * never holds every slot).
   */
  concurrency?: number;
  /** A delivery that has not finished (answer and the capped body) in this long is a failed try. */
  timeoutMs?: number;
  /** Most bytes of a receiver's answer read; the rest is never read. */
  maxResponseBytes?: number;
  /** How often the outbox is looked at besides when this process rings it (another process's writes). */
  pollMs?: number;
  /** The first retry's delay; each further one doubles, up to `maxDelayMs`, with jitter. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  random?: () => number;
  /** How many permanent refusals (a 4xx but 408, 409, 425, 429) an entry gets before it is kept as failed and the next goes on. */
  maxRefusals?: number;
  /** One line per failed try or delivery after a failure (no URL path, no secret, no body). */
  log?: (entry: Record<string, unknown>) => void;
  /**
   * Deliverers for the webhook formats that are not a POST of the body (the
   * GitHub check run, src/github): same outbox, order, timeout and retries.
   * An entry of such a format waits while no deliverer for it is given.
   */
  channels?: Partial<Record<Webhook["format"], DeliveryChannel>>;
}

/** What one try came to: a 2xx (or its like), or why not and whether for good. */
export type DeliveryOutcome = { ok: true } | { ok: false; error: string; permanent?: boolean };

/** A channel's one try at one entry, ended by `signal` (the timeout, or the notifier closing). */
export type DeliveryChannel = (entry: OutboxEntry, webhook: Webhook, signal: AbortSignal) => Promise<DeliveryOutcome>;

/** A running deliverer. */
export interface Notifier {
  /**
   * Stop looking, abort the deliveries in flight (they stay in the outbox and are sent again), and resolve when they,
   * the start-up catch-up and any look at the outbox have ended and the outbox has written what it held back.
   */
  close(): Promise<void>;
}

/** The delay before the try after `attempts` failed ones: exponential, capped, with jitter (a half to the whole of it). */
export function retryDelayMs(attempts: number, baseMs: number, maxMs: number, random: () => number = Math.random): number {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.min(attempts, 30));
  return Math.round(exp * (0.5 + random() / 2));
}

/** Whether a receiver's answer refuses the delivery for good: a 4xx, but a timeout, a conflict, too early or too many. */
export function isPermanentRefusal(status: number): boolean {
  return status >= 400 && status < 500 && ![408, 409, 425, 429].includes(status);
}

/**
 * Deliver the store's outbox (issue 27), off the gate's critical path: a
 * decision only puts its notifications in the outbox; this loop, woken by
 * the store's ring or its poll, sends each (signed, Standard Webhooks) with
 * a timeout and a cap on what it reads back, at most `concurrency` at once
 * and one per webhook, and removes it only on a 2xx. A permanent refusal
 * (`isPermanentRefusal`) `maxRefusals` times keeps the entry as failed for
 * good (counted in `notify list`) and the run's next one goes on; anything
 * else (5xx, 408/429…, no answer) is retried with exponential backoff and
 * jitter, for as long as the webhook exists; a restart sends what is left,
 * under the same IDs.
 */
export function startNotifier(options: NotifierOptions): Notifier {
  const outbox = options.store.notifications;
  const concurrency = options.concurrency ?? 4;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const cap = options.maxResponseBytes ?? 4096;
  const base = options.baseDelayMs ?? 1_000;
  const max = options.maxDelayMs ?? 3_600_000;
  const random = options.random ?? Math.random;
  const maxRefusals = options.maxRefusals ?? 5;
  const stopping = new AbortController();
  const inFlight = new Map<string, Promise<void>>();
  const perWebhook = Math.max(1, Math.floor(concurrency / 2));
  /** In flight: by (run, webhook), and how many per webhook. */
  const busyPairs = new Set<string>();
  const busyWebhooks = new Map<string, number>();
  let looking = false;
  /** The last look at the outbox (under way or done): `close` waits for it. */
  let lookDone: Promise<void> = Promise.resolve();
  let again = false;
  let closed = false;

  const tick = (): Promise<void> => {
    if (closed) return lookDone;
    if (looking) {
      again = true;
      return lookDone;
    }
    lookDone = look();
    return lookDone;
  };

  // `looking` is set and cleared inside the look, in the same turn as its last check of `again`: a ring in between is never lost.
  const look = async () => {
    looking = true;
    try {
      do {
        again = false;
        if (inFlight.size >= concurrency) break;
        const [due, webhooks] = await Promise.all([outbox.due(Date.now(), concurrency * 4, options.log), outbox.listWebhooks()]);
        const byId = new Map(webhooks.map((w) => [w.id, w]));
        for (const entry of due) {
          if (closed || inFlight.size >= concurrency) break;
          const webhook = byId.get(entry.webhook_id);
          const pair = `${entry.run_id}\u0000${entry.webhook_id}`;
          if (!webhook || (isChannelFormat(webhook.format) && !options.channels?.[webhook.format])) continue;
          if (busyPairs.has(pair) || (busyWebhooks.get(webhook.id) ?? 0) >= perWebhook || inFlight.has(entry.id)) continue;
          busyPairs.add(pair);
          busyWebhooks.set(webhook.id, (busyWebhooks.get(webhook.id) ?? 0) + 1);
          const work = deliver(entry, webhook).finally(() => {
            inFlight.delete(entry.id);
            busyPairs.delete(pair);
            busyWebhooks.set(webhook.id, (busyWebhooks.get(webhook.id) ?? 1) - 1);
            void tick();
          });
          inFlight.set(entry.id, work);
        }
      } while (again && !closed);
    } catch (error) {
      options.log?.({ notify: "outbox unreadable", error: redactSecrets((error as Error).message) });
    } finally {
      looking = false;
    }
  };

  const deliver = async (entry: OutboxEntry, webhook: Webhook) => {
    // Another server on the same store may have taken it since `due`: then this one leaves it alone. The claim lasts
    // past this try's timeout, so no second try of the entry (or of the run's next one) overlaps this one.
    try {
      if (!(await outbox.claim(entry, Date.now() + 2 * timeoutMs + 1_000))) return;
    } catch (error) {
      options.log?.({ notify: "outbox unwritable", error: redactSecrets((error as Error).message) });
      return;
    }
    const channel = options.channels?.[webhook.format];
    const outcome = channel
      ? await channel(entry, webhook, AbortSignal.any([AbortSignal.timeout(timeoutMs), stopping.signal])).catch(
          (error): DeliveryOutcome => ({ ok: false, error: redactSecrets((error as Error).message) }),
        )
      : await send(entry, webhook, { timeoutMs, cap, origin: options.origin, stop: stopping.signal });
    if (closed && !outcome.ok) return; // aborted by close: sent again after the restart, same ID
    try {
      if (outcome.ok) {
        await outbox.delivered(entry);
        if (entry.attempts > 0) options.log?.({ notify: "delivered", webhook: webhook.id, id: entry.id, attempts: entry.attempts + 1 });
      } else if (outcome.permanent && entry.attempts + 1 >= maxRefusals) {
        // Kept and shown (notify list), never dropped; the run's next notification goes on.
        await outbox.failed(entry, GAVE_UP, outcome.error);
        options.log?.({ notify: "gave up", webhook: webhook.id, id: entry.id, error: outcome.error, attempts: entry.attempts + 1 });
      } else {
        const next = Date.now() + retryDelayMs(entry.attempts, base, max, random);
        await outbox.failed(entry, next, outcome.error);
        options.log?.({
          notify: "failed",
          webhook: webhook.id,
          id: entry.id,
          error: outcome.error,
          retry_at: new Date(next).toISOString(),
        });
      }
    } catch (error) {
      options.log?.({ notify: "outbox unwritable", error: redactSecrets((error as Error).message) });
    }
  };

  const unsubscribe = onOutboxRing(() => void tick());
  const timer = setInterval(() => void tick(), options.pollMs ?? 1_000);
  timer.unref();
  // Whatever a crash left between a decision and its notifications, then what waits.
  const starting = outbox
    .catchUp()
    .catch(() => 0)
    .then(() => tick());
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      unsubscribe();
      stopping.abort();
      // Nothing of this deliverer writes after close: the catch-up, the look and the deliveries under way end first,
      // then the outbox's held-back removals are written (a world removed after a close is never partly rebuilt).
      await Promise.allSettled([starting, lookDone]);
      await Promise.allSettled([...inFlight.values()]);
      await outbox.flush().catch(() => {});
    },
  };
}

/** One try: POST the signed body; a 2xx is delivered. Reads at most `cap` bytes of the answer, follows no redirect. */
async function send(
  entry: OutboxEntry,
  webhook: Webhook,
  o: { timeoutMs: number; cap: number; origin: string; stop: AbortSignal },
): Promise<DeliveryOutcome> {
  if (isChannelFormat(webhook.format)) return { ok: false, error: `no deliverer for ${webhook.format}` };
  const body = formatNotification(entry.notification, webhook.format, o.origin);
  const signal = AbortSignal.any([AbortSignal.timeout(o.timeoutMs), o.stop]);
  try {
    const response = await fetch(webhook.url, {
      method: "POST",
      body,
      redirect: "manual",
      signal,
      headers: {
        "content-type": "application/json",
        "user-agent": `twinlock/${VERSION}`,
        ...signDelivery(webhook.secret, entry.id, new Date(), body),
      },
    });
    const ok = response.status >= 200 && response.status < 300;
    // The status decides; the answer's body is read only up to the cap (a receiver that trickles it is cut off at the timeout).
    await drain(response, o.cap).catch(() => {});
    if (ok) return { ok: true };
    return {
      ok: false,
      permanent: isPermanentRefusal(response.status),
      error: `HTTP ${response.status}${response.status >= 300 && response.status < 400 ? " (a redirect, not followed)" : ""}`,
    };
  } catch (error) {
    if (signal.aborted) return { ok: false, error: o.stop.aborted ? "stopped" : `no answer within ${o.timeoutMs} ms` };
    const cause = (error as { cause?: { code?: string } }).cause;
    return { ok: false, error: `not delivered (${cause?.code ?? (error as Error).name})` };
  }
}

/** Read at most `cap` bytes of the answer, then let the rest go (the connection is dropped, not read to its end). */
async function drain(response: Response, cap: number): Promise<void> {
  const reader = response.body?.getReader();
  if (!reader) return;
  let read = 0;
  try {
    while (read < cap) {
      const { done, value } = await reader.read();
      if (done) return;
      read += value.byteLength;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

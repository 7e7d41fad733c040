import type { RunEvent, RunState } from "../run/run-schema.js";

/**
 * What a notification can say: every run event a person or an agent waits
 * for (issue 27 item 1). One table: the webhooks' `--events`, the payload's
 * `type`, the formats' words and the MCP wait all read it.
 */
export const NOTIFICATION_KINDS = {
  "plan.review_waiting": { asked: "a reviewer", words: "plan waiting for review" },
  "plan.changes_requested": { asked: "the planner", words: "changes requested" },
  "plan.approved": { asked: "nobody", words: "plan approved" },
  "plan.declined": { asked: "nobody", words: "plan declined" },
  "consent.waiting": { asked: "a person with the consent right", words: "consent waiting" },
  "consent.given": { asked: "an operator (admit)", words: "consent given" },
  "consent.declined": { asked: "nobody", words: "consent declined" },
  "run.admitted": { asked: "nobody", words: "executor admitted" },
  "stop.raised": { asked: "a person with the stop right", words: "stop raised" },
  "stop.lifted": { asked: "nobody", words: "stop lifted" },
  "pair.closed": { asked: "nobody", words: "pair closed" },
} as const;

export type NotificationKind = keyof typeof NOTIFICATION_KINDS;

export const NOTIFICATION_KIND_NAMES = Object.keys(NOTIFICATION_KINDS) as NotificationKind[];

/** Whether `text` names a notification kind. */
export function isNotificationKind(text: string): text is NotificationKind {
  return Object.hasOwn(NOTIFICATION_KINDS, text);
}

/** What one notification tells, whatever format carries it: facts from the run, never a way to decide. */
export interface Notification {
  type: NotificationKind;
  run_id: string;
  /** The event's sequence number in the run, and which of its notifications this is (an approval also says consent waits). */
  seq: number;
  part: number;
  at: string;
  planner: string | null;
  executor: string | null;
  executor_title: string | null;
  revision: number | null;
  handoff_hash: string | null;
  /** Who is asked to act next, in words. */
  asked: string;
  /** Who recorded the event (a reviewer's name, the gate, an agent's actor name). */
  by: string;
  /** The reviewer's feedback on changes requested or a decline; a stop's reason; a close's outcome. */
  detail: string | null;
}

/** The notifications one event makes, read from the event and the run's state (for the pair's executor and hash). */
export function notificationsOf(event: RunEvent, state: RunState): Notification[] {
  const data = event.data as Record<string, unknown>;
  const planner = typeof data.planner === "string" ? data.planner : typeof data.workflow === "string" ? data.workflow : null;
  const wf = planner !== null && Object.hasOwn(state.workflows, planner) ? state.workflows[planner] : undefined;
  const receipt = (data.receipt ?? {}) as Record<string, unknown>;
  const revision =
    typeof receipt.revision === "number" ? receipt.revision : typeof data.revision === "number" ? data.revision : (wf?.revision ?? null);
  const hash =
    typeof receipt.handoff_hash === "string"
      ? receipt.handoff_hash
      : typeof data.hash === "string"
        ? data.hash
        : (wf?.handoff?.hash ?? null);
  const make = (type: NotificationKind, part: number, detail: string | null = null): Notification => ({
    type,
    run_id: state.run_id,
    seq: event.seq,
    part,
    at: event.at,
    planner,
    executor: wf?.executor ?? null,
    executor_title: wf?.executor_title ?? null,
    revision: revision !== null && revision > 0 ? revision : null,
    handoff_hash: hash,
    asked: NOTIFICATION_KINDS[type].asked,
    by: event.actor,
    detail,
  });
  const feedback = typeof receipt.feedback === "string" ? receipt.feedback : null;
  switch (event.type) {
    case "review_requested":
      return [make("plan.review_waiting", 0)];
    case "changes_requested":
      return [make("plan.changes_requested", 0, feedback)];
    case "plan_approved":
      // The plan's last approval moves the pair to consent: one event, two things to tell.
      return [make("plan.approved", 0), make("consent.waiting", 1)];
    case "plan_declined":
      return [make("plan.declined", 0, feedback)];
    case "consent_granted":
      return [make("consent.given", 0)];
    case "consent_declined":
      return [make("consent.declined", 0)];
    case "admitted":
      return [make("run.admitted", 0)];
    case "stop_raised":
      return [make("stop.raised", 0, typeof data.reason === "string" ? `!STOP:${data.reason}` : null)];
    case "stop_resolved":
      return [make("stop.lifted", 0, typeof receipt.reason === "string" ? `!STOP:${receipt.reason}` : null)];
    case "closed":
    case "failed": {
      const outcome = typeof data.outcome === "string" ? data.outcome : event.type;
      return [make("pair.closed", 0, outcome)];
    }
    default:
      return [];
  }
}

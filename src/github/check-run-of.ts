import { fieldText, pageLinkOf } from "../notify/format-notification.js";
import type { Notification } from "../notify/notification-kinds.js";
import type { RunState, Workflow } from "../run/run-schema.js";

/** The check's name on the commit; one per run (`external_id` is the run's ID). */
export const CHECK_NAME = "twinlock";

/** What the check run is set to for one notification: GitHub's `status`, `conclusion`, `details_url` and `output`. */
export interface CheckRunUpdate {
  status: "in_progress" | "completed";
  conclusion?: "success" | "failure" | "neutral";
  title: string;
  summary: string;
  details_url: string;
}

/**
 * The one commit a run's verified closes judged: the commit every pair's
 * close recorded with its change (signed with it by the verification
 * receipt's `execution_hash`). Undefined when a pair recorded none (outside
 * git, an older close) or the pairs name different commits: then no commit
 * is verified for the whole run, and the check says so instead of success.
 */
export function verifiedCommitOf(state: RunState): string | undefined {
  const commits = new Set(Object.values(state.workflows).map((w) => w.result?.execution?.commit));
  const [only] = commits;
  return commits.size === 1 ? only : undefined;
}

/**
 * What the check says on a commit the run's success does not cover: the
 * head moved past the verified commit (or no commit was recorded), so the
 * green stays on the commit a person judged and this one is `neutral`.
 */
export function uncoveredCheck(success: CheckRunUpdate, verified: string | undefined): CheckRunUpdate {
  const why =
    verified === undefined
      ? "The closes recorded no one commit they judged (closed outside git, from a changed checkout, or at different commits), so no commit is verified by this check."
      : `Verified at commit ${verified}; this commit came after it and was not judged by the close.`;
  return {
    status: "completed",
    conclusion: "neutral",
    title: verified === undefined ? "verified, at no recorded commit" : "the head moved past the verified commit",
    summary: `${why}\n\n${success.summary}`,
    details_url: success.details_url,
  };
}

/** A run's value as the check's Markdown shows it: one line, no link (fieldText), in a code span no backtick can end. */
function code(text: string, max = 120): string {
  return `\`${fieldText(text, max).replace(/`/g, "\u02cb")}\``;
}

/** Whether a closed pair's recorded change conforms to its plan (what `close` recorded; no execution recorded is not a deviation). */
function deviates(wf: Workflow): boolean {
  const c = wf.result?.execution?.conformance;
  return (
    c !== undefined &&
    c.actions_not_done.length + c.files_outside_plan.length + c.criteria_without_evidence.length + c.criteria_failed.length > 0
  );
}

/**
 * What the check says after `n`, read from the notification's kind (a closed
 * list), the gate's recorded results and the gate's own origin only: no
 * agent-written text reaches the status, the conclusion or the link, and
 * free text (feedback, a title) is shown clipped, on one line, as code.
 * Undefined when the notification changes nothing the check shows (a plan's
 * approval is told by the consent that waits, one event later in order).
 *
 * The check tells; it never decides. `success` only when every pair of the
 * run is closed verified by a person with a conforming change (`close
 * --result verified` is refused otherwise, and the agent cannot record it);
 * CI's `twinlock verify` on the gate's signed export stays the required check.
 */
export function checkRunOf(n: Notification, state: RunState, origin: string): CheckRunUpdate | undefined {
  const link = pageLinkOf(n, origin);
  const pair = n.planner !== null ? `${code(n.planner, 80)}${n.executor ? ` → ${code(n.executor, 80)}` : ""}` : "the run";
  const lines = [`Run ${code(n.run_id, 80)}, pair ${pair}${n.revision !== null ? `, revision ${n.revision}` : ""}.`];
  if (n.executor_title) lines.push(`Executor: ${code(n.executor_title, 160)}`);
  lines.push(`Asked next: ${n.asked}. Recorded by ${code(n.by, 80)}.`);
  if (n.detail) lines.push(`Detail: ${code(n.detail, 500)}`);
  lines.push(
    "",
    "This check tells what the gate is waiting for; it decides nothing. Decisions are made on the gate's pages, signed by a person; CI's `twinlock verify` on the gate's signed export is the check that judges the change.",
  );
  const open = (title: string): CheckRunUpdate => ({ status: "in_progress", title, summary: lines.join("\n"), details_url: link });
  const done = (conclusion: "success" | "failure" | "neutral", title: string): CheckRunUpdate => ({
    status: "completed",
    conclusion,
    title,
    summary: lines.join("\n"),
    details_url: link,
  });
  switch (n.type) {
    case "plan.review_waiting":
      return open("plan waiting for review");
    case "plan.changes_requested":
      return open("changes requested");
    case "plan.approved":
      return undefined;
    case "consent.waiting":
      return open("approved, waiting for consent");
    case "consent.given":
      return open("consent given, waiting for admission");
    case "run.admitted":
      return open("admitted: the executor may run");
    case "stop.raised":
      return open("stopped");
    case "stop.lifted":
      return open("stop lifted");
    case "plan.declined":
      return done("failure", "plan declined");
    case "consent.declined":
      return done("failure", "consent declined");
    case "pair.closed": {
      const pairs = Object.values(state.workflows);
      const openPairs = pairs.filter((w) => w.result === null).length;
      const wf = n.planner !== null && Object.hasOwn(state.workflows, n.planner) ? state.workflows[n.planner] : undefined;
      const outcome = wf?.result?.outcome;
      const said = outcome === undefined ? "closed" : outcome === "verified" && wf && deviates(wf) ? "deviations" : outcome;
      if (openPairs > 0) return open(`${said}; ${openPairs} more pair${openPairs === 1 ? "" : "s"} open`);
      const worst = pairs.map((w) =>
        w.result?.outcome === "verified" ? (deviates(w) ? "deviations" : "verified") : (w.result?.outcome ?? "closed"),
      );
      if (worst.every((o) => o === "verified")) return done("success", "verified");
      if (worst.includes("deviations")) return done("failure", "deviations");
      return done("failure", pairs.length === 1 ? said : `closed: ${[...new Set(worst)].join(", ")}`);
    }
    default:
      return undefined;
  }
}

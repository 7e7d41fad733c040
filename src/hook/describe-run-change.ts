/**
 * What changed a run since a session was bound, in words, from the run's
 * checkpoint in the gate home (which the agent cannot write): the events of
 * the home's last write of the run. When that write began where the session
 * was bound, they are the whole change; when it did not, the reason says how
 * many events came since and names the last write's. Read loosely, on the
 * deny path only: anything it cannot read is left out, never a reason to allow.
 */
export function describeRunChange(checkpoint: unknown, bound: { seq: number; head: string } | null): string {
  const cp = checkpoint as { seq?: unknown; last_write?: { from_seq?: unknown; events?: unknown } } | null;
  const events = Array.isArray(cp?.last_write?.events) ? (cp.last_write.events as unknown[]) : [];
  const what = events.slice(0, 5).map(describeEvent).join("; ");
  if (what === "") return "";
  if (bound !== null && cp?.last_write?.from_seq === bound.seq) return what;
  const since = bound !== null && typeof cp?.seq === "number" ? `${cp.seq - bound.seq} events since, the last write: ` : "the last write: ";
  return `${since}${what}`;
}

/** One event as a person would say it: who did what to which pair. */
function describeEvent(event: unknown): string {
  const e = event as { type?: unknown; actor?: unknown; data?: Record<string, unknown> } | null;
  const type = typeof e?.type === "string" ? e.type : "an event";
  const d = e?.data !== null && typeof e?.data === "object" ? e.data : {};
  const by = typeof e?.actor === "string" ? ` by ${short(e.actor)}` : "";
  const pair = typeof d.planner === "string" ? short(d.planner) : undefined;
  switch (type) {
    case "stop_raised":
      return `!STOP:${short(String(d.reason))} was raised on ${typeof d.workflow === "string" ? short(d.workflow) : "the run"}${by}`;
    case "stop_resolved":
      return `a stop was lifted${by}`;
    case "handoff_frozen":
      return `${pair ?? "a pair"}'s handoff was frozen again (revision ${Number(d.revision)}, ${short(String(d.hash))})${by}`;
    case "closed":
      return `${pair ?? "a pair"} was closed (${short(String(d.outcome))})${by}`;
    case "failed":
      return `${pair ?? "a pair"} was marked failed${by}`;
    case "consent_declined":
      return `the consent was withdrawn${by}`;
    default:
      return `${short(type)}${pair ? ` on ${pair}` : ""}${by}`;
  }
}

/** A recorded value cut to a length a reason can carry. */
function short(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

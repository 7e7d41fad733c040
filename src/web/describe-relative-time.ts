/**
 * How long ago `at` was, seen from `now` (both ISO 8601), in words a person
 * reads at a glance: "just now", "5 minutes ago", "3 hours ago", "2 days ago",
 * then the date; a time after `now` (a clock ahead) is "just now". An
 * unreadable time is returned as it is.
 */
export function describeRelativeTime(at: string, now: string): string {
  const then = Date.parse(at);
  const current = Date.parse(now);
  if (Number.isNaN(then) || Number.isNaN(current)) return at;
  const seconds = Math.max(0, Math.floor((current - then) / 1000));
  const ago = (n: number, unit: string) => `${n} ${unit}${n === 1 ? "" : "s"} ago`;
  if (seconds < 45) return "just now";
  if (seconds < 3600) return ago(Math.max(1, Math.round(seconds / 60)), "minute");
  if (seconds < 86_400) return ago(Math.floor(seconds / 3600), "hour");
  if (seconds < 30 * 86_400) return ago(Math.floor(seconds / 86_400), "day");
  return `on ${new Date(then).toISOString().slice(0, 10)}`;
}

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { describeRelativeTime } from "./describe-relative-time.js";

const NOW = "2026-05-01T12:00:00.000Z";
const earlier = (ms: number) => new Date(Date.parse(NOW) - ms).toISOString();

describe("describeRelativeTime", () => {
  it("says how long ago in minutes, hours and days, then the date", () => {
    expect(describeRelativeTime(earlier(10_000), NOW)).toBe("just now");
    expect(describeRelativeTime(earlier(60_000), NOW)).toBe("1 minute ago");
    expect(describeRelativeTime(earlier(5 * 60_000), NOW)).toBe("5 minutes ago");
    expect(describeRelativeTime(earlier(3 * 3_600_000), NOW)).toBe("3 hours ago");
    expect(describeRelativeTime(earlier(2 * 86_400_000), NOW)).toBe("2 days ago");
    expect(describeRelativeTime("2026-01-02T00:00:00.000Z", NOW)).toBe("on 2026-01-02");
  });

  it("says just now for a time after now, and returns an unreadable time as it is", () => {
    expect(describeRelativeTime("2026-05-01T13:00:00.000Z", NOW)).toBe("just now");
    expect(describeRelativeTime("yesterday", NOW)).toBe("yesterday");
  });

  it("never says a later time is longer ago than an earlier one", () => {
    const units = (s: string) =>
      s === "just now"
        ? 0
        : s.startsWith("on ")
          ? 1e9
          : Number.parseInt(s, 10) * (s.includes("minute") ? 60 : s.includes("hour") ? 3600 : 86400);
    fc.assert(
      fc.property(fc.nat(40 * 86_400_000), fc.nat(40 * 86_400_000), (a, b) => {
        const [near, far] = a < b ? [a, b] : [b, a];
        expect(units(describeRelativeTime(earlier(near), NOW))).toBeLessThanOrEqual(units(describeRelativeTime(earlier(far), NOW)));
      }),
    );
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fieldText, formatNotification, pageLinkOf } from "./format-notification.js";
import type { Notification } from "./notification-kinds.js";

const ORIGIN = "https://gate.example.test";

/** The attack: an executor prompt's YAML title with a newline, a fake bold status row and an outside link. */
const ATTACK_TITLE =
  "Deploy\n*Status:* APPROVED by alice (signed) - confirm: https://evil.example/confirm?run=1 <https://evil.example|open>";

function notification(o: Partial<Notification> = {}): Notification {
  return {
    type: "plan.review_waiting",
    run_id: "run_0123456789abcdef",
    seq: 3,
    part: 0,
    at: "2030-01-01T00:00:00.000Z",
    planner: "MD-29",
    executor: "MD-30",
    executor_title: "Contract executor",
    revision: 2,
    handoff_hash: `sha256:${"a".repeat(64)}`,
    asked: "a reviewer",
    by: "planner-agent",
    detail: "name the rollback",
    ...o,
  };
}

/** Every text a person reads in a Slack or Teams message, and the lines that carry a field (one per fact, one headline). */
function texts(body: string, format: "slack" | "teams"): { all: string[]; facts: string[]; headline: string; linkText: string } {
  const m = JSON.parse(body);
  if (format === "slack") {
    const all = [m.text, m.blocks[0].text.text, m.blocks[1].text.text, m.blocks[2].elements[0].text];
    return { all, facts: m.blocks[1].text.text.split("\n"), headline: m.blocks[0].text.text, linkText: all[3] };
  }
  const [head, factSet, linkBlock] = m.attachments[0].content.body;
  const facts = factSet.facts.map((f: { title: string; value: string }) => `${f.title}: ${f.value}`);
  return { all: [head.text, ...facts, linkBlock.text], facts, headline: head.text, linkText: linkBlock.text };
}

/** Addresses a chat client makes clickable: a scheme's `://`, `www.`, or a bare domain (a name, a dot, a name). */
const CLICKABLE = /[a-z][a-z0-9+.-]*:\/\/[^\s<>|]*|www\.|[\p{L}\p{N}_-]\.[\p{L}\p{N}]/giu;

function checkNeutral(n: Notification, format: "slack" | "teams") {
  const link = pageLinkOf(n, ORIGIN);
  const t = texts(formatNotification(n, format, ORIGIN), format);
  const expectedFacts = 4 + (n.executor_title ? 1 : 0) + 1 + 1 + (n.detail ? 1 : 0);
  // No field breaks its line: one line per fact, the headline one line.
  expect(t.facts).toHaveLength(expectedFacts);
  expect(t.headline).not.toMatch(/[\r\n\u2028\u2029]/);
  for (const line of t.facts) expect(line).not.toMatch(/[\r\n\u2028\u2029\p{Cc}]/u);
  // The only clickable address is the page link, in the last line; nothing from a field is one.
  for (const text of t.all.slice(0, -1)) expect(text.match(CLICKABLE) ?? []).toEqual([]);
  const rest = t.linkText.replaceAll(link, "");
  if (format === "slack") {
    expect(t.linkText).toContain(`<${link}|`);
    // Slack's link, mention and command syntax needs a raw `<`: none comes from a field.
    for (const text of t.all.slice(0, -1)) expect(text).not.toMatch(/[<>]/);
  }
  expect(rest.match(/[a-z][a-z0-9+.-]*:\/\//gi) ?? []).toEqual([]);
}

const hostile = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: "binary", maxLength: 100 }),
  fc
    .array(
      fc.constantFrom(
        "\n",
        "\r\n",
        "\u2028",
        "\t",
        "\u0000",
        "\u202e",
        "https://evil.example/x",
        "HTTP://EVIL.EXAMPLE",
        "javascript://x",
        "<",
        ">",
        "|",
        "<https://evil.example|click>",
        "<!channel>",
        "<@U123>",
        "[a](https://evil.example)",
        "evil.example",
        "www.evil",
        "`",
        "*",
        "_",
        "~",
        "\\",
        ":",
        "/",
        ".",
        "a",
        " ",
        "&amp;",
      ),
      { maxLength: 30 },
    )
    .map((parts) => parts.join("")),
);

describe("Slack and Teams messages", () => {
  for (const format of ["slack", "teams"] as const) {
    it(`puts the attack's title in a ${format} message as one line with no link and no fake row`, () => {
      const n = notification({ executor_title: ATTACK_TITLE });
      checkNeutral(n, format);
      const t = texts(formatNotification(n, format, ORIGIN), format);
      const executor = t.facts.find((l) => l.includes("Executor")) as string;
      expect(executor).toContain("Status");
      expect(t.facts.filter((l) => /Status/.test(l))).toHaveLength(1);
      expect(t.facts.some((l) => l.startsWith("*Status:*") || l.startsWith("Status:"))).toBe(false);
    });

    it(`keeps every field of a ${format} message on its line, with no link but the page's, for any field text`, () => {
      fc.assert(
        fc.property(
          fc.record({
            planner: hostile,
            executor: hostile,
            executor_title: hostile,
            by: hostile,
            detail: hostile,
            handoff_hash: hostile,
          }),
          (f) => checkNeutral(notification(f), format),
        ),
        { numRuns: 300 },
      );
    });
  }

  it("caps each field's length in a Slack or Teams message", () => {
    const n = notification({ executor_title: "t".repeat(10_000), detail: "d".repeat(100_000), by: "b".repeat(1_000) });
    for (const format of ["slack", "teams"] as const) {
      const body = formatNotification(n, format, ORIGIN);
      expect(body.length).toBeLessThan(2_000);
      expect(body).not.toContain("t".repeat(161));
      expect(body).not.toContain("b".repeat(81));
    }
  });

  it("keeps the raw values in the JSON format (a program reads them)", () => {
    const n = notification({ executor_title: ATTACK_TITLE, by: "a\nb" });
    const data = JSON.parse(formatNotification(n, "json", ORIGIN)).data;
    expect(data.executor_title).toBe(ATTACK_TITLE);
    expect(data.by).toBe("a\nb");
    expect(data.url).toBe(pageLinkOf(n, ORIGIN));
  });

  it("makes a field one line of at most its cap, with look-alikes for `://` and a domain's dots", () => {
    expect(fieldText("a\n\r\tb\u2028c\u0000d")).toBe("a b c d");
    expect(fieldText("see https://evil.example/x")).not.toMatch(CLICKABLE);
    expect(Array.from(fieldText("😀".repeat(50), 10))).toHaveLength(11);
  });
});

import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { folderRunStore } from "../../home/folder-run-store.js";
import { openGateHome } from "../../home/gate-home.js";
import { runCli, runCliJson, STACK_FRAME } from "../../test-support/run-cli.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function home(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-notify-cli-"));
  dirs.push(dir);
  // A person's gate home exists already (pinning a suite makes it).
  return openGateHome(path.join(dir, "home"), { create: true }).dir;
}

const SLACK = "https://hooks.slack.com/services/T0000/B0000/s3cretPathPart";

describe("twinlock notify", () => {
  it("adds a webhook, prints its secret once, keeps it in the gate home (0600), and lists it with the URL redacted and no secret", async () => {
    const h = home();
    const added = await runCliJson<{ webhook: { id: string; url: string }; secret: string }>([
      "notify",
      "add",
      SLACK,
      "--events",
      "plan.review_waiting,consent.waiting",
      "--format",
      "slack",
      "--home",
      h,
    ]);
    expect(added.code, added.output).toBe(0);
    expect(added.json.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(added.json.webhook.url).toBe("https://hooks.slack.com/…");
    const file = path.join(h, "notify", "webhooks.json");
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readFileSync(file, "utf8")).toContain(added.json.secret);
    const listed = await runCli(["notify", "list", "--home", h]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(added.json.webhook.id);
    expect(listed.stdout).toContain("plan.review_waiting,consent.waiting");
    for (const secret of [added.json.secret, "s3cretPathPart", "T0000"]) expect(listed.output).not.toContain(secret);
    const listedJson = await runCli(["notify", "list", "--home", h, "--json"]);
    expect(listedJson.stdout).not.toContain(added.json.secret);
    expect(listedJson.stdout).not.toContain("s3cretPathPart");
  });

  it("signs with a secret from a file, and never prints it", async () => {
    const h = home();
    const secretFile = path.join(path.dirname(h), "secret");
    const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    writeFileSync(secretFile, `${secret}\n`);
    const added = await runCli(["notify", "add", "http://127.0.0.1:9/hook", "--secret-file", secretFile, "--home", h]);
    expect(added.code, added.output).toBe(0);
    expect(added.output).not.toContain(secret);
    const [w] = await folderRunStore(openGateHome(h)).notifications.listWebhooks();
    expect(w?.secret).toBe(secret);
  });

  it("refuses a URL that is not http(s), an unknown event, an unknown format and a bad secret file, in one line, changing nothing", async () => {
    const h = home();
    const bad = path.join(path.dirname(h), "bad-secret");
    writeFileSync(bad, "not a secret");
    for (const [argv, said] of [
      [["notify", "add", "file:///etc/passwd"], /only over http or https/],
      [["notify", "add", "javascript:alert(1)"], /only over http or https/],
      [["notify", "add", "ftp://user:pw@host/x"], /only over http or https/],
      [["notify", "add", "not a url"], /is not a URL/],
      [
        ["notify", "add", "https://x.example/h", "--events", "plan.approved,launch.missiles"],
        /"launch.missiles" is not a notification; give some of plan.review_waiting/,
      ],
      [["notify", "add", "https://x.example/h", "--format", "xml"], /--format "xml" is not one of json, slack, teams/],
      [["notify", "add", "https://x.example/h", "--secret-file", bad], /does not hold a Standard Webhooks secret/],
      [["notify", "remove", "wh_0000000000000000"], /there is no webhook wh_0000000000000000/],
      [["notify", "remove", "../../x"], /is not a webhook ID/],
    ] as Array<[string[], RegExp]>) {
      const r = await runCli([...argv, "--home", h]);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.stderr.trim().split("\n"), argv.join(" ")).toHaveLength(1);
      expect(r.stderr, argv.join(" ")).toMatch(said);
      expect(r.output).not.toMatch(STACK_FRAME);
      expect(r.output).not.toContain("pw@");
    }
    expect(await folderRunStore(openGateHome(h)).notifications.listWebhooks()).toEqual([]);
  });

  it("removes a webhook by ID", async () => {
    const h = home();
    const added = await runCliJson<{ webhook: { id: string } }>(["notify", "add", "https://x.example/h", "--home", h]);
    expect((await runCli(["notify", "remove", added.json.webhook.id, "--home", h])).code).toBe(0);
    expect((await runCli(["notify", "list", "--home", h])).stdout).toMatch(/no webhooks/);
  });
});

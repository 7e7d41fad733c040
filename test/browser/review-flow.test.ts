/*
 * The review flow in real Chromium (SPEC §10, issue 10 part 6): Debian's
 * `chromium` driven by playwright-core, with a CDP virtual authenticator
 * (ctap2, resident keys, user verification on) standing in for the
 * reviewer's passkey. One browser, one page and one gate server for the
 * file; the steps run in order and each builds on the one before.
 *
 *  1. alice is invited (library), registers a passkey at /enrol/{token}, signs in at /signin;
 *  2. an agent freezes the handoff with its bearer token over the JSON API;
 *  3. alice requests changes (empty feedback refused by the form), the agent
 *     re-freezes, alice sees the diff, approves and consents;
 *  4. `twinlock admit` (the built CLI) admits, `verify-receipts` verifies the passkey receipts;
 *  5. an approval of a revision no longer current is refused with a link to the current one;
 *  6. the agent's token is refused on every human route and page;
 *  7. keyboard and labels; 8. 375 px wide; 9. no request leaves the origin, no CSP error.
 *
 * A screenshot of each state goes to test-results/browser/ (not committed).
 */
import { spawnSync } from "node:child_process";
import { appendFileSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import type { Browser, BrowserContext, CDPSession, ConsoleMessage, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRun } from "../../src/home/run-ledger.js";
import { createInvitation } from "../../src/passkey/passkey-enrolment.js";
import { createAgentToken } from "../../src/server/agent-tokens.js";
import { type RunningGateServer, startGateServer } from "../../src/server/start-gate-server.js";
import {
  conformingChange,
  EXECUTOR,
  type GateRun,
  homeOf,
  makeGateRun,
  PLANNER,
  removeGateRuns,
  runBytes,
  startRun,
  storeOf,
  workflowOf,
} from "../../src/test-support/run-fixture.js";
import { addVirtualAuthenticator, CHROMIUM, HAVE_CHROMIUM, launchWithPasskey } from "../support/chromium.js";
import { DIST_BIN, ensureBuilt, REPO_ROOT } from "../support/ensure-built.js";

const SHOTS = path.join(REPO_ROOT, "test-results", "browser");
/** Each step's own limit; a whole step (a passkey ceremony and a page load or two) takes well under a second. */
const STEP_MS = 30_000;
const WIDE = { width: 1000, height: 800 };
/** The line the agent adds in revision 2, which the diff must show. */
/** The screenshots the README shows, refreshed with TWINLOCK_UPDATE_SCREENSHOTS=1. */
const README_SHOTS: Record<string, string> = {
  "revision-review-1280": path.join(REPO_ROOT, "docs", "screenshots", "revision-1280.png"),
  "revision-review-375": path.join(REPO_ROOT, "docs", "screenshots", "revision-375.png"),
  "consent-1280": path.join(REPO_ROOT, "docs", "screenshots", "consent.png"),
};
/** The two widths every decision state is checked and photographed at: a desktop and a phone. */
const WIDTHS = [
  { width: 1280, height: 800 },
  { width: 375, height: 812 },
] as const;
const AXE_SOURCE = readFileSync(path.join(REPO_ROOT, "node_modules", "axe-core", "axe.min.js"), "utf8");
const ADDED_LINE = "Rollback verified on a Windows runner: revert commit, then go test -race ./cart/...";

if (!HAVE_CHROMIUM)
  console.warn(`test/browser/review-flow.test.ts skipped: ${CHROMIUM} is missing (apt-get install chromium; .ci/run installs it)`);

describe.skipIf(!HAVE_CHROMIUM)(`the review flow in Chromium (${CHROMIUM})`, () => {
  let browser: Browser | undefined;
  let context: BrowserContext;
  let page: Page;
  let cdp: CDPSession;
  let server: RunningGateServer | undefined;
  let origin: string;
  let g: GateRun;
  let runId: string;
  let agentToken: string;
  let enrolToken: string;
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];
  let shot = 0;

  /** Save the viewport as test-results/browser/NN-{name}.png; with TWINLOCK_UPDATE_SCREENSHOTS=1, the README's two are copied to docs/screenshots/. */
  async function screenshot(name: string): Promise<string> {
    const file = path.join(SHOTS, `${String(++shot).padStart(2, "0")}-${name}.png`);
    await page.screenshot({ path: file });
    const readme = README_SHOTS[name];
    if (readme && process.env.TWINLOCK_UPDATE_SCREENSHOTS === "1") {
      mkdirSync(path.dirname(readme), { recursive: true });
      copyFileSync(file, readme);
    }
    return file;
  }

  /**
   * Do what submits a passkey form, and wait until the page the decision
   * leads to has loaded (the client script signs, posts, then navigates).
   */
  async function decided(submit: () => Promise<unknown>): Promise<void> {
    const loaded = page.waitForEvent("load", { timeout: 15_000 });
    await submit();
    await loaded;
  }

  /** Scroll so `selector` starts near the top of the viewport. */
  async function scrollToTop(selector: string): Promise<void> {
    await page
      .locator(selector)
      .first()
      .evaluate((el) => {
        el.scrollIntoView({ block: "start" });
        window.scrollBy(0, -16);
      });
  }

  /** An agent's call over the JSON API with its bearer token (from Node, as an agent process would). */
  async function agentFreeze(run: GateRun, id: string, token: string): Promise<{ revision: number; hash: string; review_url: string }> {
    const res = await fetch(`${origin}/api/runs/${id}/pairs/${PLANNER}/freeze`, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ handoff_dir: run.handoff }),
    });
    const body = (await res.json()) as { ok: boolean; revision: number; hash: string; review_url: string };
    expect(res.status, JSON.stringify(body)).toBe(200);
    expect(body.review_url.startsWith(`${origin}/`)).toBe(true);
    return body;
  }

  /** The agent revises the handoff: one more line in report.md. */
  function revise(run: GateRun, line: string): void {
    appendFileSync(path.join(run.handoff, "report.md"), `\n${line}\n`);
  }

  /** Press Tab until `selector` has the focus (the page's own tab order), failing after `max` presses. */
  async function tabTo(selector: string, max = 250): Promise<void> {
    for (let i = 0; i < max; i++) {
      if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
      await page.keyboard.press("Tab");
    }
    throw new Error(`Tab never reached ${selector}`);
  }

  /** Every form control in the accessibility tree has a name (its label). */
  async function unnamedControls(): Promise<string[]> {
    const { nodes } = (await cdp.send("Accessibility.getFullAXTree")) as {
      nodes: Array<{ ignored: boolean; role?: { value: string }; name?: { value: string } }>;
    };
    const controls = new Set(["textbox", "combobox", "checkbox", "radio", "spinbutton", "button", "ListBox"]);
    const found = nodes.filter((n) => !n.ignored && controls.has(n.role?.value ?? ""));
    expect(found.length).toBeGreaterThan(0);
    return found.filter((n) => !(n.name?.value ?? "").trim()).map((n) => n.role?.value ?? "?");
  }

  /** The elements that reach past the viewport's right edge, for the failure message. */
  async function overflowing(): Promise<string[]> {
    return page.evaluate(() =>
      [...document.querySelectorAll("body *")]
        .filter((el) => el.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
        .slice(0, 10)
        .map((el) => `<${el.tagName.toLowerCase()} class="${el.className}"> to ${Math.round(el.getBoundingClientRect().right)} px`),
    );
  }

  /**
   * axe-core's serious and critical violations on the page as it is now,
   * run inside Chromium (evaluated over CDP, which the page's CSP does not
   * govern), each as "rule: target".
   */
  async function seriousViolations(): Promise<string[]> {
    await page.evaluate(AXE_SOURCE);
    return page.evaluate(async () => {
      const axe = (window as unknown as { axe: { run(ctx: Document, o: object): Promise<{ violations: AxeViolation[] }> } }).axe;
      const { violations } = await axe.run(document, { resultTypes: ["violations"] });
      return violations
        .filter((v) => v.impact === "serious" || v.impact === "critical")
        .flatMap((v) => v.nodes.map((n) => `${v.id} (${v.impact}): ${n.target.join(" ")}`));
    });
  }

  /**
   * The page in its present state at 1280 and 375 px: no serious or critical
   * axe violation, no sideways scrolling, the decision panel (when the page
   * has one: its heading and its first control) in view with the page scrolled to its top, and a screenshot of
   * each width as `{name}-{width}`. The viewport is put back afterwards.
   */
  async function checkAtBothWidths(name: string): Promise<void> {
    try {
      for (const size of WIDTHS) {
        await page.setViewportSize(size);
        // The page and the panel (which scrolls inside itself once a long form is filled in) each from their top.
        await page.evaluate(() => {
          window.scrollTo(0, 0);
          document.querySelector("#decide")?.scrollTo(0, 0);
        });
        expect(await seriousViolations(), `${name} at ${size.width} px`).toEqual([]);
        const width = await page.evaluate(() => document.documentElement.scrollWidth);
        expect(width, `${name} is ${width} px wide at ${size.width}: ${(await overflowing()).join("; ")}`).toBeLessThanOrEqual(size.width);
        if ((await page.locator("#decide").count()) > 0) {
          const panelInView = () =>
            page.evaluate(() => {
              const rects = [
                document.querySelector("#decide-h"),
                document.querySelector("#decide summary, #decide button, #decide .decision-none"),
              ].map((el) => el?.getBoundingClientRect());
              return rects.every((r) => r !== undefined && r.top >= 0 && r.bottom <= window.innerHeight && r.right <= window.innerWidth);
            });
          expect(await panelInView(), `the decision panel of ${name} is in view at ${size.width} px`).toBe(true);
          // On a phone the bar leaves the page readable: at most 40% of the screen.
          if (size.width < 600) {
            const share = await page.evaluate(
              () => (document.querySelector("#decide")?.getBoundingClientRect().height ?? 0) / window.innerHeight,
            );
            expect(
              share,
              `the decision panel of ${name} takes ${Math.round(share * 100)}% of the screen at ${size.width} px`,
            ).toBeLessThanOrEqual(0.41);
          }
          // It stays in view down the page (sticky, or the phone's bottom bar).
          await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight / 2));
          expect(await panelInView(), `the decision panel of ${name} stays in view halfway down at ${size.width} px`).toBe(true);
          await page.evaluate(() => window.scrollTo(0, 0));
        }
        await screenshot(`${name}-${size.width}`);
      }
    } finally {
      await page.setViewportSize(WIDE);
    }
  }

  async function stateShown(): Promise<string | null> {
    return page.locator("dd[data-state]").getAttribute("data-state");
  }

  beforeAll(async () => {
    rmSync(SHOTS, { recursive: true, force: true });
    mkdirSync(SHOTS, { recursive: true });
    await ensureBuilt();
    g = makeGateRun();
    runId = (await startRun(g)).state.run_id;
    const home = homeOf(g);
    agentToken = (await createAgentToken(home, { agent: "planner-agent", runId, planner: PLANNER })).token;
    enrolToken = (await createInvitation(home, "alice", ["review", "consent", "apply", "stop"])).token;
    server = await startGateServer({ store: storeOf(g), listen: "127.0.0.1:0" });
    origin = server.origin;
    expect(origin).toBe(`http://localhost:${server.port}`);
    ({ browser, context, page, cdp } = await launchWithPasskey(WIDE));
    context.on("request", (r) => requests.push(r.url()));
    context.on("console", (m: ConsoleMessage) => {
      if (m.type() === "error") consoleErrors.push(m.text());
    });
    page.on("pageerror", (e) => pageErrors.push(String(e)));
  }, 180_000);

  afterAll(async () => {
    try {
      await browser?.close();
    } finally {
      try {
        await server?.close();
      } finally {
        removeGateRuns();
      }
    }
  }, 60_000);

  it(
    "1. alice registers a passkey from her enrolment link and signs in with it",
    async () => {
      await page.goto(`${origin}/enrol/${enrolToken}`);
      await expect.poll(() => page.locator("h1").textContent()).toContain("Register a passkey for alice");
      await screenshot("enrol");
      await page.getByRole("button", { name: "Register a passkey" }).click();
      await page.locator("#enrol-status", { hasText: "Passkey registered for alice" }).waitFor();
      await screenshot("enrolled");
      // The link works once.
      expect((await page.request.get(`${origin}/enrol/${enrolToken}`)).status()).toBe(404);

      await page.goto(`${origin}/signin`);
      await page.getByRole("button", { name: "Sign in with a passkey" }).click();
      await page.waitForURL(`${origin}/`);
      await page.locator(".who", { hasText: "Signed in as alice" }).waitFor();
      await screenshot("signed-in-run-list");
    },
    STEP_MS,
  );

  it(
    "2. an agent freezes the handoff with its token over the JSON API",
    async () => {
      // One very long line, as an agent could hide the end of a sentence past the right edge.
      revise(g, `${"The plan keeps every step inside cart/ ".repeat(20)}LONG-LINE-END`);
      const frozen = await agentFreeze(g, runId, agentToken);
      expect(frozen.revision).toBe(1);
      expect(workflowOf(g).state).toBe("plan_review_pending");
      await page.goto(`${origin}/runs/${runId}`);
      await page.getByText(PLANNER).first().waitFor();
      await screenshot("run-page");
    },
    STEP_MS,
  );

  it(
    "3a. the request-changes form refuses an empty feedback, then is filled and sent with the keyboard alone",
    async () => {
      await page.goto(`${origin}/runs/${runId}/pairs/${PLANNER}/revisions/1`);
      expect(await stateShown()).toBe("plan_review_pending");
      await screenshot("revision-1");
      // Long lines wrap: nothing in a file's text or diff is scrolled out of sight to the right.
      expect(await page.$$eval("pre", (els) => els.filter((el) => el.scrollWidth > el.clientWidth + 1).length)).toBe(0);
      expect(await page.$$eval("pre", (els) => els.some((el) => el.textContent?.includes("LONG-LINE-END")))).toBe(true);
      expect(await unnamedControls()).toEqual([]);
      const feedback = page.getByLabel("What should change (required unless you comment on items or file lines below)");
      await expect.poll(() => feedback.count()).toBe(1);

      // Empty feedback and no comment: the page's own check stops the submit; no challenge is asked, nothing recorded.
      const before = runBytes(g);
      const asked = requests.length;
      await page.locator("#request-changes > summary").click();
      await page.locator("#form-request-changes button[type=submit]").click();
      expect(await feedback.evaluate((el) => (el as HTMLTextAreaElement).validity.customError)).toBe(true);
      await page.waitForTimeout(200);
      expect(requests.slice(asked).filter((u) => u.includes("/review"))).toEqual([]);
      expect(runBytes(g).equals(before)).toBe(true);

      // Keyboard only: the skip link is the first stop, then Tab on to the disclosure, Enter opens it, Tab to the feedback, type, Tab to the button, Enter.
      await page.goto(`${origin}/runs/${runId}/pairs/${PLANNER}/revisions/1`);
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.textContent)).toBe("Skip to content");
      await tabTo("#request-changes > summary");
      await page.keyboard.press("Enter");
      await tabTo("#feedback-changes", 3);
      await page.keyboard.type("Add Windows coverage and the rollback evidence.");
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => document.activeElement?.closest("form")?.id)).toBe("form-request-changes");
      expect(await page.evaluate(() => document.activeElement?.getAttribute("type"))).toBe("submit");
      await decided(() => page.keyboard.press("Enter"));
      await expect.poll(stateShown).toBe("plan_revision_pending");
      expect(workflowOf(g).state).toBe("plan_revision_pending");
      await screenshot("changes-requested");
    },
    STEP_MS,
  );

  it(
    "3b. the agent revises and re-freezes; alice sees the diff of revision 2, approves it and consents",
    async () => {
      revise(g, ADDED_LINE);
      const frozen = await agentFreeze(g, runId, agentToken);
      expect(frozen.revision).toBe(2);
      await page.goto(frozen.review_url);
      expect(await stateShown()).toBe("plan_review_pending");
      const changes = page.locator("#changes");
      // Compared with the revision alice last decided on, and said so, in the summary and the section.
      expect(await page.locator("#summary h3", { hasText: "Since revision" }).textContent()).toBe(
        "Since revision 1, which you asked to change",
      );
      expect(await page.locator("#changes-h").textContent()).toBe("What changed since revision 1, which you asked to change");
      await changes.getByText("Changes requested by alice").waitFor();
      await changes.getByText("Add Windows coverage and the rollback evidence.").waitFor();
      const added = page.locator("#files .diff ins.diff-add", { hasText: ADDED_LINE });
      await expect.poll(() => added.count()).toBe(1);
      expect(await added.textContent()).toBe(`added: +${ADDED_LINE}`);
      expect(await page.locator("#files .diff .diff-file").allTextContents()).toEqual(["--- a/report.md", "+++ b/report.md"]);
      await scrollToTop("#files article:has(pre.diff)");
      await screenshot("revision-2-diff");
      await checkAtBothWidths("revision-review");
      // The executor's prompt, opened: its tag blocks as labelled sections, its mode table as a table.
      await page.locator("#executor-text > summary").click();
      const modes = page.locator("#executor-text table").first();
      await modes.waitFor();
      expect(await modes.locator("th").allTextContents()).toEqual(["mode", "may do"]);
      expect(await page.locator("#executor-text .prompt-block-label").count()).toBeGreaterThanOrEqual(3);
      await scrollToTop("#executor-text .prompt-block");
      await screenshot("executor-prompt");

      // The run list puts this run first, as waiting on alice, by its title.
      await page.goto(`${origin}/`);
      const waiting = page.locator("#waiting");
      await waiting.getByRole("link", { name: workflowOf(g).executor_title }).waitFor();
      expect(await waiting.locator(".waits-on-you").count()).toBe(1);
      expect(await waiting.locator("time").getAttribute("title")).toMatch(/^\d{4}-\d\d-\d\dT/);
      await checkAtBothWidths("run-list");
      // The filters are a plain form: choosing a state by its label and submitting loads /?state=…, waiting on alice still first.
      await page.getByLabel("State", { exact: true }).selectOption("plan_review_pending");
      await page.getByLabel("Suite", { exact: true }).selectOption({ index: 1 });
      await Promise.all([
        page.waitForURL(/\/\?state=plan_review_pending&suite=/),
        page.getByRole("button", { name: "Filter the runs" }).click(),
      ]);
      await waiting.getByRole("link", { name: workflowOf(g).executor_title }).waitFor();
      expect(await page.locator(".filter-result").textContent()).toContain("with a pair plan review pending");
      await checkAtBothWidths("run-list-filtered");
      await page.getByLabel("State", { exact: true }).selectOption("closed");
      await Promise.all([page.waitForURL(/\/\?state=closed/), page.getByRole("button", { name: "Filter the runs" }).click()]);
      expect(await page.locator(".filter-result").textContent()).toContain("No run is shown");
      expect(await page.locator("table.runs").count()).toBe(0);
      await page.goto(frozen.review_url);

      await decided(() => page.getByRole("button", { name: "Sign and approve this revision" }).click());
      await expect.poll(stateShown).toBe("execution_consent_pending");
      // The confirmation says what was recorded and what comes next, and has the focus.
      const confirmation = page.locator("#confirmation");
      expect(await confirmation.textContent()).toContain("Your review receipt: approved on revision 2, signed with your passkey");
      expect(await confirmation.textContent()).toContain(frozen.hash);
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("confirmation");
      const wf = workflowOf(g);
      expect(wf.reviews.map((r) => [r.revision, r.decision, r.signature?.kind])).toEqual([
        [1, "changes_requested", "webauthn"],
        [2, "approved", "webauthn"],
      ]);

      // The consent question names the exact executor: its ID and title.
      // The legend is the question in one line; the whole of it, as the library words it, is one click away.
      const legend = (await page.locator("#form-consent legend").first().textContent()) ?? "";
      expect(legend).toBe(`May ${EXECUTOR} (${wf.executor_title}) act on ${PLANNER}'s plan, revision 2?`);
      const question = (await page.locator("#consent-question-whole p").textContent()) ?? "";
      expect(question).toContain(`May ${EXECUTOR} (${wf.executor_title})`);
      expect(question).toContain(`revision 2 (${frozen.hash})`);
      expect(await unnamedControls()).toEqual([]);
      for (const label of ["Yes, consent", "No, refuse", "Mode", "Environment", "All the plan's actions"])
        await expect.poll(() => page.getByLabel(label, { exact: true }).count()).toBe(1);
      // With the keyboard: Tab to the consent disclosure, Enter opens it, Tab into the radio group, Space chooses, Tab to the form's button, Enter.
      await tabTo("#consent > summary");
      await page.keyboard.press("Enter");
      await page.locator("#consent-yes").waitFor({ state: "visible" });
      // On a phone the opened consent panel is a bar of at most 40% of the screen, in view, its answer visible without scrolling.
      await page.setViewportSize({ width: 375, height: 812 });
      const bar = await page.evaluate(() => {
        const r = document.querySelector("#decide")?.getBoundingClientRect();
        const yes = document.querySelector("#consent-yes")?.getBoundingClientRect();
        return { top: r?.top, bottom: r?.bottom, height: r?.height, yesBottom: yes?.bottom, viewport: window.innerHeight };
      });
      expect(bar.height ?? Infinity, JSON.stringify(bar)).toBeLessThanOrEqual(0.41 * bar.viewport);
      expect((bar.top ?? -1) >= 0 && (bar.bottom ?? Infinity) <= bar.viewport, JSON.stringify(bar)).toBe(true);
      expect(bar.yesBottom ?? Infinity, JSON.stringify(bar)).toBeLessThanOrEqual(bar.bottom ?? 0);
      await screenshot("consent-open-375");
      await page.setViewportSize(WIDE);
      await screenshot("consent");
      await checkAtBothWidths("consent");
      await tabTo("#consent-yes");
      await page.keyboard.press("Space");
      expect(await page.locator("#consent-yes").isChecked()).toBe(true);
      await tabTo("#form-consent button[type=submit]");
      await decided(() => page.keyboard.press("Enter"));
      await expect.poll(stateShown).not.toBe("execution_consent_pending");
      const after = workflowOf(g);
      expect(after.consents.at(-1)?.signature?.kind).toBe("webauthn");
      expect(after.state).toBe(await stateShown());
      await screenshot("consented");
      const recorded = (await page.locator("#confirmation").textContent()) ?? "";
      expect(recorded).toContain("Your consent receipt: approved on revision 2");
      expect(recorded).toContain("An operator now starts the executor's agent through the gate (twinlock exec");
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("confirmation");
      await checkAtBothWidths("confirmation");
    },
    // Eight axe runs and screenshots besides the ceremonies.
    3 * STEP_MS,
  );

  it(
    "4. `twinlock admit` from the CLI admits, and verify-receipts verifies the passkey receipts",
    async () => {
      const cli = (args: string[]) =>
        spawnSync(process.execPath, [DIST_BIN, ...args, "--home", g.home], { encoding: "utf8", cwd: g.dir, timeout: 20_000 });
      const admitted = cli(["admit", g.runFile, EXECUTOR]);
      expect(admitted.status, admitted.stdout + admitted.stderr).toBe(0);
      expect(workflowOf(g).state).toBe("executing");

      const verified = cli(["verify-receipts", g.runFile, "--json"]);
      expect(verified.status, verified.stdout + verified.stderr).toBe(0);
      const rows = (JSON.parse(verified.stdout) as { receipts: Array<{ kind: string; signed: boolean; ok: boolean; detail: string }> })
        .receipts;
      const signed = rows.filter((r) => r.signed);
      expect(signed.map((r) => r.kind).sort()).toEqual(["consent", "review", "review"]);
      for (const r of signed) expect(r).toMatchObject({ ok: true, detail: "signed by alice" });

      await page.reload();
      expect(await stateShown()).toBe("executing");
      // The timeline marks each passkey receipt verified, saying whose passkey and which right.
      const reasons = await page.locator("#receipts .mark-ok + .reason").allTextContents();
      expect(reasons).toEqual(
        expect.arrayContaining(["alice's enrolled passkey, review right", "alice's enrolled passkey, consent right"]),
      );
      expect(await page.locator("#receipts .mark-bad").count()).toBe(0);
      expect(await page.locator("#receipts .receipt-admission .mark-gate").textContent()).toBe("recorded by the gate");
      expect(await page.locator("#receipts").textContent()).not.toContain("unsigned: unsigned");
      expect(await page.locator("#receipts .receipt-freeze").first().textContent()).toContain(
        "not signed: recorded by the gate on agent:planner-agent's word",
      );
      await page.locator("#receipts").scrollIntoViewIfNeeded();
      await screenshot("admitted-receipts");
    },
    STEP_MS,
  );

  it(
    "4b. a verified close on the page: refused to alice without the verify right, then signed with bob's passkey",
    async () => {
      const change = conformingChange(g);
      const lines = change.changed.map((f) => `${f.sha256?.slice("sha256:".length)}  ${f.path}`).join("\n");
      /** Open the verified-close disclosure and fill the change as sha256sum prints it and a command for each criterion. */
      const fill = async () => {
        await page.locator("#verified-close > summary").click();
        await page.getByLabel(/^Changed files, one a line/).fill(lines);
        const commands = page.locator('#form-verified-close input[name^="criterion-command:"]');
        const n = await commands.count();
        expect(n).toBeGreaterThan(0);
        for (let i = 0; i < n; i++) await commands.nth(i).fill(`go test ./cart/... # criterion ${i + 1}`);
      };
      const revision2 = `${origin}/runs/${runId}/pairs/${PLANNER}/revisions/2`;
      await page.goto(revision2);
      expect(await stateShown()).toBe("executing");
      expect(await unnamedControls()).toEqual([]);
      await fill();
      await checkAtBothWidths("verified-close");
      const before = runBytes(g);
      await page.getByRole("button", { name: "Sign and close as verified" }).click();
      const alert = page.locator("#form-verified-close-alert");
      await expect.poll(() => alert.textContent()).toContain("alice does not have the verify right");
      expect(runBytes(g).equals(before)).toBe(true);
      expect(workflowOf(g).state).toBe("executing");
      await screenshot("verified-close-refused");

      // bob holds the verify right: his own browser profile with its own passkey.
      const invite = (await createInvitation(homeOf(g), "bob", ["review", "verify"])).token;
      const alicePage = page;
      const bobContext = await (browser as Browser).newContext({ viewport: WIDE });
      try {
        bobContext.setDefaultTimeout(10_000);
        bobContext.on("request", (r) => requests.push(r.url()));
        page = await bobContext.newPage();
        page.on("pageerror", (e) => pageErrors.push(String(e)));
        await addVirtualAuthenticator(bobContext, page);
        await page.goto(`${origin}/enrol/${invite}`);
        await page.getByRole("button", { name: "Register a passkey" }).click();
        await page.locator("#enrol-status", { hasText: "Passkey registered for bob" }).waitFor();
        await page.goto(`${origin}/signin`);
        await page.getByRole("button", { name: "Sign in with a passkey" }).click();
        await page.waitForURL(`${origin}/`);
        await page.goto(revision2);
        await fill();
        await decided(() => page.getByRole("button", { name: "Sign and close as verified" }).click());
        await expect.poll(stateShown).toBe("closed");
        const confirmation = (await page.locator("#confirmation").textContent()) ?? "";
        expect(confirmation).toContain("Your verification receipt: verified on revision 2, signed with your passkey");
        expect(await page.evaluate(() => document.activeElement?.id)).toBe("confirmation");
        const wf = workflowOf(g);
        expect([wf.state, wf.result?.outcome, wf.result?.receipt?.by]).toEqual(["closed", "verified", "bob"]);
        expect((wf.result?.receipt?.signature as { kind?: string } | undefined)?.kind).toBe("webauthn");
        expect(wf.result?.execution?.changed_files.map((f) => f.path)).toEqual(change.changed.map((f) => f.path));
        expect(await page.locator("#receipts .receipt-verification .reason").textContent()).toBe("bob's enrolled passkey, verify right");
        await checkAtBothWidths("verified-closed");
      } finally {
        page = alicePage;
        await bobContext.close();
      }
    },
    3 * STEP_MS,
  );

  describe("on a second run, waiting for review", () => {
    let g2: GateRun;
    let run2: string;
    let token2: string;

    beforeAll(async () => {
      g2 = makeGateRun();
      run2 = (await startRun(g2)).state.run_id;
      token2 = (await createAgentToken(homeOf(g2), { agent: "planner-agent", runId: run2, planner: PLANNER })).token;
      await agentFreeze(g2, run2, token2);
    }, STEP_MS);

    it(
      "5. approving a revision that is no longer current is refused, links the current one, and records nothing",
      async () => {
        await page.goto(`${origin}/runs/${run2}/pairs/${PLANNER}/revisions/1`);
        expect(await stateShown()).toBe("plan_review_pending");
        // The agent re-freezes while the page of revision 1 is open.
        revise(g2, "A second look at the cache lock.");
        expect((await agentFreeze(g2, run2, token2)).revision).toBe(2);
        const before = runBytes(g2);

        await page.getByRole("button", { name: "Sign and approve this revision" }).click();
        const alert = page.locator("#form-approve-alert");
        const link = alert.getByRole("link", { name: "See the current revision." });
        await link.waitFor();
        expect(await alert.textContent()).toMatch(/not the current revision|stale|changed|no longer/i);
        expect(await link.getAttribute("href")).toBe(`${origin}/runs/${run2}/pairs/${PLANNER}`);
        await screenshot("stale-refused");
        expect(runBytes(g2).equals(before)).toBe(true);
        expect(workflowOf(g2).reviews).toEqual([]);

        await link.click();
        await page.waitForURL(`${origin}/runs/${run2}/pairs/${PLANNER}/revisions/2`);
        expect(await stateShown()).toBe("plan_review_pending");
      },
      STEP_MS,
    );

    it(
      "6. the agent's token is refused on every human route and every page, even beside alice's session",
      async () => {
        const auth = { Authorization: `Bearer ${token2}` };
        const api = `${origin}/api/runs/${run2}`;
        const decisions = [
          `${api}/pairs/${PLANNER}/review`,
          `${api}/pairs/${PLANNER}/consent`,
          `${api}/pairs/${PLANNER}/apply-approval`,
          `${api}/stops`,
          `${api}/stops/lift`,
        ];
        const posts = [...decisions.flatMap((u) => [u, `${u}/challenge`]), `${origin}/signout`];
        const hash = workflowOf(g2).handoff?.hash;
        const refused: Array<[string, number, string]> = [];
        for (const url of posts) {
          const res = await page.request.post(url, {
            headers: auth,
            data: { handoff_hash: hash, decision: "approved", approve: true, reason: "agent-says-so" },
          });
          refused.push([url, res.status(), ((await res.json()) as { code: string }).code]);
        }
        const pages = [
          `${origin}/`,
          `${origin}/runs/${run2}`,
          `${origin}/runs/${run2}/pairs/${PLANNER}`,
          `${origin}/runs/${run2}/pairs/${PLANNER}/revisions/1`,
          `${origin}/runs/${run2}/pairs/${PLANNER}/revisions/2`,
        ];
        for (const url of pages) {
          const res = await page.request.get(url, { headers: { ...auth, Accept: "text/html" }, maxRedirects: 0 });
          refused.push([url, res.status(), (await res.text()).includes("agent tokens cannot") ? "AGENT_FORBIDDEN" : "?"]);
        }
        expect(refused).toEqual([...posts, ...pages].map((u) => [u, 403, "AGENT_FORBIDDEN"]));
        expect(workflowOf(g2).reviews).toEqual([]);
        expect(workflowOf(g2).state).toBe("plan_review_pending");
        // The same token still does what it is for.
        const status = await page.request.get(`${api}/pairs/${PLANNER}`, { headers: auth });
        expect(status.status()).toBe(200);
      },
      STEP_MS,
    );

    it(
      "7. the run page's stop and lift forms have labels and are used with the keyboard alone",
      async () => {
        await page.goto(`${origin}/runs/${run2}`);
        expect(await unnamedControls()).toEqual([]);
        const form = page.locator("#form-stop");
        for (const label of ["Stops", "Note (optional)"]) await expect.poll(() => form.getByLabel(label, { exact: true }).count()).toBe(1);
        await expect.poll(() => form.getByLabel(/^Reason/).count()).toBe(1);

        await tabTo("#raise-stop > summary");
        await page.keyboard.press("Enter");
        await tabTo("#stop-reason", 3);
        await page.keyboard.type("data-loss-risk");
        await tabTo("#stop-note", 3);
        await page.keyboard.type("Hold until the backup is checked.");
        await tabTo("#form-stop button[type=submit]", 3);
        await decided(() => page.keyboard.press("Enter"));
        await page.locator("#lift-resolution-0").waitFor();
        expect(runStops(g2)).toEqual([["data-loss-risk", false]]);
        await screenshot("stop-raised");

        expect(await unnamedControls()).toEqual([]);
        await tabTo("#lift-resolution-0");
        await page.keyboard.type("The backup restored cleanly.");
        await tabTo("#form-lift-0 button[type=submit]", 3);
        await decided(() => page.keyboard.press("Enter"));
        await expect.poll(() => page.locator("#lift-resolution-0").count()).toBe(0);
        expect(runStops(g2)).toEqual([["data-loss-risk", true]]);
        await screenshot("stop-lifted");
      },
      STEP_MS,
    );

    it(
      "8. at 375 px wide the pages do not scroll sideways",
      async () => {
        await page.setViewportSize({ width: 375, height: 800 });
        try {
          const pages = [
            `${origin}/`,
            `${origin}/signin`,
            `${origin}/runs/${run2}`,
            `${origin}/runs/${run2}/pairs/${PLANNER}/revisions/2`,
            `${origin}/runs/${runId}/pairs/${PLANNER}/revisions/1`,
            `${origin}/runs/${runId}/pairs/${PLANNER}/revisions/2`,
          ];
          for (const url of pages) {
            await page.goto(url);
            const width = await page.evaluate(() => document.documentElement.scrollWidth);
            expect(width, `${url} is ${width} px wide: ${(await overflowing()).join("; ")}`).toBeLessThanOrEqual(375);
          }
          await page.locator("#files .diff").first().scrollIntoViewIfNeeded();
          await screenshot("narrow-375");
        } finally {
          await page.setViewportSize(WIDE);
        }
      },
      STEP_MS,
    );
  });

  it("9. every request went to the server's origin, with no CSP complaint and no script error", () => {
    expect(requests.length).toBeGreaterThan(20);
    expect(requests.filter((u) => !u.startsWith(`${origin}/`))).toEqual([]);
    expect(consoleErrors.filter((m) => /content security policy|refused to (load|execute|apply|connect)/i.test(m))).toEqual([]);
    expect(pageErrors).toEqual([]);
  });

  it("10. a screenshot of each state is saved", () => {
    for (const name of [
      "enrol",
      "revision-2-diff",
      "consent",
      "stale-refused",
      "narrow-375",
      ...["revision-review", "run-list", "run-list-filtered", "consent", "confirmation", "verified-close", "verified-closed"].flatMap((n) =>
        WIDTHS.map((w) => `${n}-${w.width}`),
      ),
    ]) {
      const file = readFileSyncMaybe(SHOTS, name);
      expect(file, name).not.toBeNull();
    }
  });
});

/** Each stop of the run: its reason and whether it was lifted. */
function runStops(run: GateRun): Array<[string, boolean]> {
  return readRun(run.runFile, homeOf(run)).state.stops.map((x) => [x.reason, x.resolved_at !== null && x.resolved_at !== undefined]);
}

/** The first screenshot in `dir` whose name ends in `-{name}.png`, as bytes, or null. */
function readFileSyncMaybe(dir: string, name: string): Buffer | null {
  for (let i = 1; i < 100; i++) {
    const file = path.join(dir, `${String(i).padStart(2, "0")}-${name}.png`);
    if (existsSync(file)) return readFileSync(file);
  }
  return null;
}

/** What axe-core reports of one violation, as far as this test reads it. */
interface AxeViolation {
  id: string;
  impact: string | null;
  nodes: Array<{ target: string[] }>;
}

/*
 * A team's gate in real Chromium: two `twinlock serve` processes on one
 * PostgreSQL database, each with its own gate home folder, behind one URL (a
 * small proxy in this test). The proxy sends every passkey ceremony's first
 * request (enrolment and sign-in options, a decision's challenge) to server A
 * and every other POST to server B, and spreads page loads between both: so
 * each ceremony starts on one server and ends on the other, and nothing a
 * reviewer does can work unless the database carries it. The people's and
 * the CI's steps run from the terminal (the built CLI, `--store`), the
 * agent's over the JSON API with its token.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServerProcess, startServerProcess } from "../../bench/lib/server-process.mjs";
import { demoHandoffRecords, writeDemoHandoff } from "../../src/demo/demo-handoff.js";
import { migratePostgres } from "../../src/store/postgres/postgres-run-store.js";
import { freshPostgresDatabase, TEST_POSTGRES } from "../../src/test-support/postgres-database.js";
import { EXECUTOR, PLANNER, RUN_EXAMPLE_SUITE, TEST_PINNER } from "../../src/test-support/run-fixture.js";
import { HAVE_CHROMIUM, launchWithPasskey } from "../support/chromium.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

const STEP_MS = 30_000;

describe.skipIf(!HAVE_CHROMIUM || !TEST_POSTGRES)(
  "a team's gate: two servers on one PostgreSQL database behind one URL, in Chromium",
  () => {
    let dir: string;
    let url: string;
    let drop: (() => Promise<void>) | undefined;
    const servers: ServerProcess[] = [];
    let proxy: http.Server | undefined;
    let origin: string;
    let browser: Browser | undefined;
    let page: Page;
    let runId: string;
    let agentToken: string;
    let enrolLink: string;
    let handoff: string;
    /** Which server answered each request: `A POST /signin/options`. */
    const routed: string[] = [];

    /** The built CLI as a person or CI runs it, on the team database, from its own home. */
    function cli(args: string[], home = "cli-home") {
      const r = spawnSync(process.execPath, [DIST_BIN, ...args, "--store", url, "--home", path.join(dir, home)], {
        encoding: "utf8",
        cwd: dir,
        timeout: 30_000,
      });
      return { code: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout };
    }

    /** Where the proxy sends requests: filled in once the servers (which must know the proxy's origin) are up. */
    const backends = { A: "", B: "" };

    /** The proxy: ceremony starts to A, other POSTs to B, page loads and reads alternately. */
    function startProxy(): Promise<number> {
      let turn = 0;
      const made = http.createServer((req, res) => {
        const p = (req.url ?? "/").split("?")[0] as string;
        const name: "A" | "B" = req.method === "POST" ? (/\/(options|challenge)$/.test(p) ? "A" : "B") : turn++ % 2 === 0 ? "A" : "B";
        routed.push(`${name} ${req.method} ${p}`);
        const target = new URL(backends[name]);
        const upstream = http.request(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(res);
          },
        );
        upstream.on("error", () => {
          res.writeHead(502);
          res.end();
        });
        req.pipe(upstream);
      });
      proxy = made;
      return new Promise((resolve) => made.listen(0, "127.0.0.1", () => resolve((made.address() as AddressInfo).port)));
    }

    async function stateShown(): Promise<string | null> {
      return page.locator("dd[data-state]").getAttribute("data-state");
    }

    async function decided(submit: () => Promise<unknown>): Promise<void> {
      const loaded = page.waitForEvent("load", { timeout: 15_000 });
      await submit();
      await loaded;
    }

    beforeAll(async () => {
      await ensureBuilt();
      dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-team-browser-"));
      const db = await freshPostgresDatabase("twinlock_browser");
      drop = db.drop;
      url = db.url;
      await migratePostgres(url);
      const root = path.join(dir, "agent-work");
      handoff = path.join(root, "md-29");
      mkdirSync(root);
      writeDemoHandoff(handoff, demoHandoffRecords());
      const key = path.join(dir, "pinner.key");
      writeFileSync(key, TEST_PINNER.export({ type: "pkcs8", format: "pem" }), { mode: 0o600 });

      // The proxy's port is the origin both servers are told (passkeys bind to its host).
      const proxyPort = await startProxy();
      origin = `http://localhost:${proxyPort}`;
      const serve = (home: string) =>
        startServerProcess(
          [
            DIST_BIN,
            "serve",
            "--store",
            url,
            "--home",
            path.join(dir, home),
            "--listen",
            "127.0.0.1:0",
            "--origin",
            origin,
            "--handoff-root",
            root,
            "--quiet",
          ],
          { timeoutMs: 30_000 },
        );
      servers.push(await serve("home-a"), await serve("home-b"));
      backends.A = servers[0]?.url as string;
      backends.B = servers[1]?.url as string;

      // A person pins the suite, makes the run, invites alice and gives the agent a token: all in the database.
      const pinned = cli(["trust", "pin", "--suite", RUN_EXAMPLE_SUITE, "--allow-unsigned", "--key", key]);
      expect(pinned.code, pinned.out).toBe(0);
      const made = cli([
        "init-run",
        "team/md-29",
        "--suite",
        RUN_EXAMPLE_SUITE,
        "--planner",
        PLANNER,
        "--mode",
        "APPLY_SAFE",
        "--environment",
        "staging",
        "--json",
      ]);
      expect(made.code, made.out).toBe(0);
      runId = /run_[0-9a-f]{16}/.exec(made.stdout)?.[0] as string;
      // The agent's handoff goes in the run's own folder under the servers' handoff root.
      handoff = path.join(root, runId);
      writeDemoHandoff(handoff, demoHandoffRecords());
      expect(runId).toMatch(/^run_[0-9a-f]{16}$/);
      const invite = cli(["reviewer", "invite", "alice", "--origin", origin]);
      expect(invite.code, invite.out).toBe(0);
      enrolLink = /(http:\/\/\S+\/enrol\/\S+)/.exec(invite.stdout)?.[1] as string;
      const token = cli(["token", "create", "--agent", "planner-agent", "--run", runId]);
      expect(token.code, token.out).toBe(0);
      agentToken = /(tl_[0-9a-f]{16}_[A-Za-z0-9_-]{43})/.exec(token.stdout)?.[1] as string;
      ({ browser, page } = await launchWithPasskey());
    }, 180_000);

    afterAll(async () => {
      try {
        await browser?.close();
      } finally {
        for (const s of servers) await s.stop();
        proxy?.close();
        await drop?.();
        if (dir) rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);

    it(
      "1. alice registers her passkey and signs in, each ceremony started on one server and finished on the other",
      async () => {
        await page.goto(enrolLink.replace(/^http:\/\/[^/]+/, origin));
        await page.getByRole("button", { name: "Register a passkey" }).click();
        await page.locator("#enrol-status", { hasText: "Passkey registered for alice" }).waitFor();
        await page.goto(`${origin}/signin`);
        await page.getByRole("button", { name: "Sign in with a passkey" }).click();
        await page.waitForURL(`${origin}/`);
        await page.locator(".who", { hasText: "Signed in as alice" }).waitFor();
        expect(routed).toEqual(
          expect.arrayContaining([
            expect.stringMatching(/^A POST \/enrol\/.+\/options$/),
            expect.stringMatching(/^B POST \/enrol\/[^/]+$/),
            "A POST /signin/options",
            "B POST /signin",
          ]),
        );
        // Signed in through B, her session is known to A as well: page loads alternate between them.
        for (let i = 0; i < 2; i++) {
          await page.goto(`${origin}/runs/${runId}`);
          await page.locator(".who", { hasText: "Signed in as alice" }).waitFor();
        }
      },
      STEP_MS,
    );

    it(
      "2. the agent freezes its handoff over the API; alice approves and consents in the browser, each passkey decision split across the servers",
      async () => {
        const res = await fetch(`${origin}/api/runs/${runId}/pairs/${PLANNER}/freeze`, {
          method: "POST",
          headers: { Authorization: `Bearer ${agentToken}`, "Content-Type": "application/json" },
          body: JSON.stringify({ handoff_dir: handoff }),
        });
        expect(res.status, await res.clone().text()).toBe(200);
        await page.goto(`${origin}/runs/${runId}/pairs/${PLANNER}/revisions/1`);
        expect(await stateShown()).toBe("plan_review_pending");
        await decided(() => page.getByRole("button", { name: "Sign and approve this revision" }).click());
        await expect.poll(stateShown).toBe("execution_consent_pending");
        await page.locator("#consent > summary").click();
        await page.locator("#consent-yes").check();
        await decided(() => page.locator("#form-consent button[type=submit]").click());
        await expect.poll(stateShown).not.toBe("execution_consent_pending");
        const decisions = routed.filter((r) => / POST \/api\/runs\/.+\/(review|consent)(\/challenge)?$/.test(r));
        expect(decisions.filter((r) => r.endsWith("/challenge")).every((r) => r.startsWith("A "))).toBe(true);
        expect(decisions.filter((r) => !r.endsWith("/challenge")).every((r) => r.startsWith("B "))).toBe(true);
        expect(decisions.length).toBeGreaterThanOrEqual(4);
      },
      STEP_MS,
    );

    it(
      "3. CI admits the executor from a third home; the export verifies offline, passkey receipts included",
      async () => {
        const admitted = cli(["admit", runId, EXECUTOR], "ci-home");
        expect(admitted.code, admitted.out).toBe(0);
        const again = cli(["admit", runId, EXECUTOR], "ci-home");
        expect(again.code).not.toBe(0);
        const out = path.join(dir, "export");
        const exported = cli(["export", runId, "--out", out], "ci-home");
        expect(exported.code, exported.out).toBe(0);
        const offline = (args: string[]) => spawnSync(process.execPath, [DIST_BIN, ...args], { encoding: "utf8", cwd: os.tmpdir() });
        const log = offline(["verify-log", "--exported", path.join(out, "run.json")]);
        expect(log.status, log.stdout + log.stderr).toBe(0);
        const receipts = offline([
          "verify-receipts",
          "--exported",
          path.join(out, "run.json"),
          "--trust",
          path.join(out, "trust.json"),
          "--json",
        ]);
        expect(receipts.status, receipts.stdout + receipts.stderr).toBe(0);
        const rows = (JSON.parse(receipts.stdout) as { receipts: Array<{ kind: string; signed: boolean; ok: boolean; detail: string }> })
          .receipts;
        const signed = rows.filter((r) => r.signed).map((r) => [r.kind, r.ok, r.detail]);
        expect(signed).toEqual(
          expect.arrayContaining([
            ["review", true, "signed by alice"],
            ["consent", true, "signed by alice"],
          ]),
        );
      },
      STEP_MS,
    );

    it(
      "4. alice signs out from the header; neither server knows her session any more",
      async () => {
        await page.goto(`${origin}/`);
        await page.getByRole("button", { name: "Sign out" }).click();
        await page.waitForURL(`${origin}/signin`);
        for (let i = 0; i < 2; i++) {
          const res = await page.request.get(`${origin}/api/runs`);
          expect(res.status()).toBe(401);
        }
      },
      STEP_MS,
    );
  },
);

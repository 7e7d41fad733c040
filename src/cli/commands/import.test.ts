import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { openGateHome } from "../../home/gate-home.js";
import { pinSuite } from "../../home/suite-pins.js";
import { runCli } from "../../test-support/run-cli.js";
import {
  driveTo,
  homeOf,
  makeGateRun,
  makeRunTempDir,
  removeGateRuns,
  review,
  snapshotTree,
  TEST_PINNER,
} from "../../test-support/run-fixture.js";
import { ensureGateKey } from "../../trust/gate-key.js";
import { generateReviewerKey } from "../../trust/keys.js";

afterAll(removeGateRuns);

/** A run driven to `executing` and exported with --out; the run file is then gone, as if lost. */
async function exportedRun(options: { copySuite?: boolean } = {}) {
  const g = makeGateRun(options);
  await driveTo(g, "executing");
  const out = path.join(makeRunTempDir("twinlock-import-"), "bundle");
  const r = await runCli(["export", g.runFile, "--out", out, "--home", g.home]);
  expect(r.code, r.output).toBe(0);
  return { g, out };
}

describe("twinlock import", () => {
  it("restores a lost run file from its export into the home it was made in, exactly as exported, and the run carries on", async () => {
    const { g, out } = await exportedRun();
    const bytes = readFileSync(g.runFile);
    rmSync(g.runFile);
    const restored = path.join(g.dir, "restored.json");
    const r = await runCli(["import", out, "--as", restored, "--accept-unsigned", "--home", g.home]);
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toMatch(/imported run run_[0-9a-f]{16} \(\d+ events, \d+ frozen files\)/);
    expect(readFileSync(restored)).toEqual(bytes);
    const log = await runCli(["verify-log", restored, "--home", g.home]);
    expect(log.code, log.output).toBe(0);
    const status = await runCli(["pair-status", restored, "MD-29", "--home", g.home]);
    expect(status.code, status.output).toBe(0);
  });

  it("never replaces a run: a second import, or one while the run file still exists, is refused and writes nothing", async () => {
    const { g, out } = await exportedRun();
    const before = snapshotTree(g.dir);
    const r = await runCli(["import", out, "--as", path.join(g.dir, "copy.json"), "--accept-unsigned", "--home", g.home]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/which still exists; continue that run file/);
    expect(snapshotTree(g.dir)).toEqual(before);
    const onTop = await runCli(["import", out, "--as", g.runFile, "--accept-unsigned", "--home", g.home]);
    expect(onTop.code).toBe(1);
    expect(onTop.stderr).toMatch(/already exists/);
  });

  it("refuses an older copy of a run the home has moved past (a rollback)", async () => {
    const g = makeGateRun();
    await driveTo(g, "plan_review_pending");
    const out = path.join(makeRunTempDir("twinlock-import-"), "old");
    expect((await runCli(["export", g.runFile, "--out", out, "--home", g.home])).code).toBe(0);
    await review(g, "approved");
    rmSync(g.runFile);
    const r = await runCli(["import", out, "--as", path.join(g.dir, "old.json"), "--accept-unsigned", "--home", g.home]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/never an older or other copy/);
    expect(existsSync(path.join(g.dir, "old.json"))).toBe(false);
  });

  it("refuses a run.json whose events were edited, before anything is written", async () => {
    const { g, out } = await exportedRun();
    rmSync(g.runFile);
    const file = path.join(out, "run.json");
    const json = JSON.parse(readFileSync(file, "utf8"));
    json.events[1].actor = "mallory";
    writeFileSync(file, JSON.stringify(json));
    const target = path.join(g.dir, "edited.json");
    const r = await runCli(["import", out, "--as", target, "--accept-unsigned", "--home", g.home]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/does not verify|does not match|hash/);
    expect(existsSync(target)).toBe(false);
  });

  it("refuses frozen bytes that do not hash to their name, or are missing, naming the file", async () => {
    const { g, out } = await exportedRun();
    rmSync(g.runFile);
    const [first] = readdirSync(path.join(out, "frozen"));
    const blob = path.join(out, "frozen", first as string);
    rmSync(blob, { force: true });
    const missing = await runCli(["import", out, "--as", path.join(g.dir, "a.json"), "--accept-unsigned", "--home", g.home]);
    expect(missing.code).not.toBe(0);
    expect(missing.stderr).toMatch(/is missing; export the run again/);
    writeFileSync(blob, "not the frozen bytes\n");
    const forged = await runCli(["import", out, "--as", path.join(g.dir, "b.json"), "--accept-unsigned", "--home", g.home]);
    expect(forged.code).not.toBe(0);
    expect(forged.stderr).toMatch(/do not hash to that/);
    expect(existsSync(path.join(g.dir, "a.json")) || existsSync(path.join(g.dir, "b.json"))).toBe(false);
  });

  it("refuses a run made in another gate home: a run file belongs to its home", async () => {
    const { g, out } = await exportedRun({ copySuite: true });
    // The other home trusts the first gate's signatures (its pin lists that gate's key), so only the home's rule refuses.
    const config = path.join(g.suite, "twinlock.yaml");
    const doc = parseDocument(readFileSync(config, "utf8"));
    doc.set("gate_keys", [{ name: "first-home", public_key: (await ensureGateKey(homeOf(g))).publicKey }]);
    writeFileSync(config, doc.toString());
    const otherHome = openGateHome(path.join(makeRunTempDir("twinlock-other-home-"), "home"), { create: true });
    await pinSuite(otherHome, { suiteDir: g.suite, allowUnsigned: true, key: TEST_PINNER });
    const other = otherHome.dir;
    const r = await runCli(["import", out, "--as", path.join(path.dirname(other), "run.json"), "--accept-unsigned", "--home", other]);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/import it into a team store/);
  });

  it("refuses a run of a suite pinned with --allow-unsigned unless told --accept-unsigned: its approvals prove nothing about who gave them", async () => {
    const { g, out } = await exportedRun();
    rmSync(g.runFile);
    const r = await runCli(["import", out, "--as", path.join(g.dir, "r.json"), "--home", g.home]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/pinned with --allow-unsigned .* pass --accept-unsigned to import it knowingly/);
    expect(existsSync(path.join(g.dir, "r.json"))).toBe(false);
  });

  it("refuses a run whose decisions the store's pin does not trust (attack: an agent's own export with approvals it recorded)", async () => {
    const g = makeGateRun({ copySuite: true });
    await driveTo(g, "executing");
    const out = path.join(makeRunTempDir("twinlock-import-"), "bundle");
    expect((await runCli(["export", g.runFile, "--out", out, "--home", g.home])).code).toBe(0);
    rmSync(g.runFile);
    // The home's pin of this suite now requires signed receipts by listed reviewers; the run's approvals are unsigned.
    const config = path.join(g.suite, "twinlock.yaml");
    const doc = parseDocument(readFileSync(config, "utf8"));
    doc.setIn(["policies", "require_signed_receipts"], true);
    doc.set("reviewers", [
      { name: "alice", public_key: generateReviewerKey().publicKey, rights: ["review", "consent", "apply", "stop", "freeze"] },
    ]);
    writeFileSync(config, doc.toString());
    await pinSuite(homeOf(g), { suiteDir: g.suite, key: TEST_PINNER });
    const r = await runCli(["import", out, "--as", path.join(g.dir, "r.json"), "--accept-unsigned", "--home", g.home]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /decisions? that the pin of .* does not trust .*an import takes only decisions signed by reviewers this store trusts/,
    );
    expect(existsSync(path.join(g.dir, "r.json"))).toBe(false);
  });

  it("says what to give for a folder that is no export, and for a missing export run", async () => {
    const nowhere = path.join(makeRunTempDir("twinlock-import-"), "missing");
    const r = await runCli(["import", nowhere, "--as", "x.json"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/holds no run\.json; give the folder `twinlock export RUN --out DIR` wrote/);
    const v = await runCli(["verify-receipts", "--exported", path.join(nowhere, "run.json"), "--trust", "t.json"]);
    expect(v.code).toBe(2);
    expect(v.stderr).toMatch(/does not exist; give the run\.json of an export/);
  });

  it("asks for --as on the folder store, which keeps runs as files", async () => {
    const { g, out } = await exportedRun();
    const r = await runCli(["import", out, "--home", g.home]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/give --as FILE/);
  });
});

describe("twinlock verify-receipts --exported", () => {
  it("judges an export's receipts by the trust file the person names, with no gate home at all", async () => {
    const { out } = await exportedRun();
    const trust = JSON.parse(readFileSync(path.join(out, "trust.json"), "utf8"));
    expect(trust.format).toBe("twinlock-export-trust/1");
    const r = await runCli([
      "verify-receipts",
      "--exported",
      path.join(out, "run.json"),
      "--trust",
      path.join(out, "trust.json"),
      "--home",
      path.join(out, "no-home-here"),
    ]);
    expect(r.code, r.output).toBe(0);
    expect(r.stdout).toMatch(/receipts, 0 untrusted; trust from .*trust\.json \(by its own account: the pin of/);
  });

  it("never takes the trust beside the export on its own (attack: an export whose trust.json names the agent's keys)", async () => {
    const { out } = await exportedRun();
    const r = await runCli(["verify-receipts", "--exported", path.join(out, "run.json")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/give --trust FILE with --exported: .* the one that came with this export proves nothing/);
  });

  it("refuses a trust file of another suite, and says what to give when it is missing", async () => {
    const { out } = await exportedRun();
    const file = path.join(out, "trust.json");
    const trust = JSON.parse(readFileSync(file, "utf8"));
    writeFileSync(file, JSON.stringify({ ...trust, suite_id: "someone-else" }));
    const other = await runCli(["verify-receipts", "--exported", path.join(out, "run.json"), "--trust", file]);
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(/is the trust of suite someone-else/);
    rmSync(file);
    const missing = await runCli(["verify-receipts", "--exported", path.join(out, "run.json"), "--trust", file]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--trust .*trust\.json does not exist; give a trust\.json/);
  });
});

describe("--store and its settings, given wrong", () => {
  it("refuse in one line with what to give, before any database is asked: a URL that is not postgres://, a pool size that is no count", async () => {
    const { g } = await exportedRun();
    const notPostgres = await runCli(["pair-status", "run_0123456789abcdef", "MD-29", "--store", "mysql://x/y", "--home", g.home]);
    expect(notPostgres.code).toBe(2);
    expect(notPostgres.stderr).toMatch(/--store is not a store URL .*; give postgres:\/\/USER@HOST:PORT\/DB/);
    const unparsable = await runCli(["pair-status", "run_0123456789abcdef", "MD-29", "--store", "postgres://[bad", "--home", g.home]);
    expect(unparsable.code).toBe(2);
    expect(unparsable.stderr).toMatch(/is not a connection string PostgreSQL can use; give postgres:\/\/USER@HOST:PORT\/DB/);
    const before = process.env.TWINLOCK_STORE_POOL;
    process.env.TWINLOCK_STORE_POOL = "lots";
    try {
      const pool = await runCli(["token", "list", "--store", "postgres://127.0.0.1:1/none", "--home", g.home]);
      expect(pool.code).toBe(2);
      expect(pool.stderr).toMatch(/TWINLOCK_STORE_POOL="lots" is not a connection count; give a whole number from 1 to 200/);
      expect(pool.output.split("\n").filter((l) => l.trim()).length).toBe(1);
    } finally {
      if (before === undefined) delete process.env.TWINLOCK_STORE_POOL;
      else process.env.TWINLOCK_STORE_POOL = before;
    }
  });
});

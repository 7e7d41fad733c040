/**
 * The attacks of the gate-home issue, each played by an agent that can write
 * the run file, the handoff folder and the suite, holds the planner's freeze
 * key but no reviewer key, and cannot write the gate home. Every one must be
 * refused with a reason that names it. Decisions use the real gate functions
 * on a signing copy of the example suite, pinned in its own home.
 */
import { createPrivateKey, type KeyObject } from "node:crypto";
import {
  chmodSync,
  cpSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { demoHandoffRecords, writeDemoHandoff } from "../demo/demo-handoff.js";
import { IntegrityError, RefusalError } from "../errors/errors.js";
import { admit, recordDryRunResult } from "../gate/admit.js";
import { checkoutApproved } from "../gate/checkout-approved.js";
import { consentPairExecution } from "../gate/consent-pair-execution.js";
import { freezePairHandoff } from "../gate/freeze-pair-handoff.js";
import { raiseStop, resolveStop } from "../gate/hard-stops.js";
import { initRun } from "../gate/init-run.js";
import { presentPlan } from "../gate/present-plan.js";
import { reviewPairPlan } from "../gate/review-pair-plan.js";
import { hashEvent } from "../run/event-chain.js";
import type { RunFile } from "../run/run-schema.js";
import { editPrompt } from "../test-support/run-fixture.js";
import { generateReviewerKey } from "../trust/keys.js";
import { folderRunStore } from "./folder-run-store.js";
import { type GateHome, openGateHome } from "./gate-home.js";
import { readRun } from "./run-ledger.js";
import { addPinner, listPinners, listPins, pinSuite, unpinSuite } from "./suite-pins.js";

const EXAMPLE_SUITE = path.resolve(import.meta.dirname, "../../examples/suite");
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface World {
  dir: string;
  suite: string;
  handoff: string;
  runFile: string;
  home: GateHome;
  keys: Record<"alice" | "planner" | "agent", KeyObject>;
}

function setReviewers(suite: string, reviewers: Array<{ name: string; public_key: string; rights: string[] }>, id?: string): void {
  const file = path.join(suite, "twinlock.yaml");
  const doc = parseDocument(readFileSync(file, "utf8"));
  doc.set("reviewers", reviewers);
  if (id) doc.set("suite_id", id);
  doc.setIn(["policies", "separate_duties"], true);
  writeFileSync(file, doc.toString());
}

/** A person's world: a signing suite listing alice (a person) and the planner agent's freeze key, pinned in a home. */
async function world(): Promise<World> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-home-attack-"));
  dirs.push(dir);
  const suite = path.join(dir, "suite");
  cpSync(EXAMPLE_SUITE, suite, { recursive: true });
  const made = { alice: generateReviewerKey(), planner: generateReviewerKey(), agent: generateReviewerKey() };
  setReviewers(
    suite,
    [
      { name: "alice", public_key: made.alice.publicKey, rights: ["review", "consent", "apply", "stop"] },
      { name: "planner-agent", public_key: made.planner.publicKey, rights: ["freeze"] },
    ],
    `home-attack-${path.basename(dir).slice(-6).toLowerCase()}`,
  );
  const handoff = path.join(dir, "handoff");
  writeDemoHandoff(handoff, demoHandoffRecords());
  const home = openGateHome(path.join(dir, "home"), { create: true });
  const keys = {
    alice: createPrivateKey(made.alice.privatePem),
    planner: createPrivateKey(made.planner.privatePem),
    agent: createPrivateKey(made.agent.privatePem),
  };
  // alice sets the home up: her key makes the first pin, so it is the home's pinner.
  await pinSuite(home, { suiteDir: suite, key: keys.alice });
  return { dir, suite, handoff, runFile: path.join(dir, "run.json"), home, keys };
}

const hashOf = (w: World) => readRun(w.runFile, w.home).state.workflows["MD-29"]?.handoff?.hash as string;

async function toConsented(w: World): Promise<void> {
  await initRun({
    run: w.runFile,
    store: folderRunStore(w.home),
    suiteRoot: w.suite,
    planners: ["MD-29"],
    mode: "APPLY_SAFE",
    environment: "staging",
    actor: "agent",
  });
  await freezePairHandoff({ run: w.runFile, store: folderRunStore(w.home), planner: "MD-29", handoffDir: w.handoff, key: w.keys.planner });
  await reviewPairPlan({
    run: w.runFile,
    store: folderRunStore(w.home),
    planner: "MD-29",
    decision: "approved",
    handoffHash: hashOf(w),
    key: w.keys.alice,
  });
  await consentPairExecution({
    run: w.runFile,
    store: folderRunStore(w.home),
    planner: "MD-29",
    approve: true,
    handoffHash: hashOf(w),
    key: w.keys.alice,
  });
}

const tryAdmit = (w: World, executor = "MD-30", runFile = w.runFile) =>
  admit({ run: runFile, store: folderRunStore(w.home), executor, actor: "agent" });
const failed = (r: Awaited<ReturnType<typeof admit>>) => r.checks.filter((c) => !c.ok).map((c) => c.id);

/** Rewrite a run file's events and rebuild its chain, head, revision and state, as an agent with a text editor can. */
function rebuild(runFile: string, edit: (run: RunFile) => void): void {
  const run = JSON.parse(readFileSync(runFile, "utf8")) as RunFile;
  edit(run);
  let prev = run.events[0]?.prev as string;
  run.events.forEach((e, i) => {
    e.seq = i + 1;
    e.prev = prev;
    prev = hashEvent(e);
  });
  run.head = prev;
  run.revision = run.events.length;
  writeFileSync(runFile, `${JSON.stringify(run, null, 1)}\n`);
}

describe("attack 1: the run file chooses what it is judged by", () => {
  it("refuses init-run on the agent's own copy of the suite listing its own key as alice", async () => {
    const w = await world();
    const copy = path.join(w.handoff, "suite-copy");
    cpSync(w.suite, copy, { recursive: true });
    setReviewers(copy, [{ name: "alice", public_key: generateReviewerKey().publicKey, rights: ["review", "consent", "apply"] }]);
    await expect(
      initRun({ run: w.runFile, store: folderRunStore(w.home), suiteRoot: copy, planners: ["MD-29"], actor: "agent" }),
    ).rejects.toThrow(/is not pinned in gate home/);
  });

  it("refuses a run whose suite.root was rewritten to the agent's copy (chain rebuilt)", async () => {
    const w = await world();
    await toConsented(w);
    const copy = path.join(w.dir, "agent-suite");
    cpSync(w.suite, copy, { recursive: true });
    rebuild(w.runFile, (run) => {
      ((run.events[0] as RunFile["events"][number]).data as { suite: { root: string } }).suite.root = copy;
      run.state.suite.root = copy;
    });
    const r = await tryAdmit(w);
    expect(r.admitted).toBe(false);
    expect(failed(r)).toEqual(expect.arrayContaining(["chain", "pin"]));
    expect(r.checks.find((c) => c.id === "pin")?.detail).toMatch(/the run names suite .* at .*agent-suite, but it is pinned at/);
  });

  it("refuses MD-28 as MD-29's executor after the agent re-pairs MD-29 in the pinned folder", async () => {
    const w = await world();
    await toConsented(w);
    editPrompt(w.suite, "debugging/md-29-debugging-planner.md", (t) => t.replace("paired_prompt_id: MD-30", "paired_prompt_id: MD-28"));
    const r = await tryAdmit(w, "MD-28");
    expect(r.admitted).toBe(false);
    expect(failed(r)).toContain("1");
    await expect(
      initRun({
        run: path.join(w.dir, "run2.json"),
        store: folderRunStore(w.home),
        suiteRoot: w.suite,
        planners: ["MD-29"],
        actor: "agent",
      }),
    ).rejects.toThrow(RefusalError);
  });

  it("refuses a pinned suite folder later replaced by a symbolic link to another folder", async () => {
    const w = await world();
    await toConsented(w);
    const moved = path.join(w.dir, "moved-suite");
    cpSync(w.suite, moved, { recursive: true });
    rmSync(w.suite, { recursive: true, force: true });
    symlinkSync(moved, w.suite);
    const r = await tryAdmit(w);
    expect(r.admitted).toBe(false);
    expect(r.checks.find((c) => c.id === "pin")?.detail).toMatch(/is now a symbolic link/);
  });

  it("refuses a run when twinlock.yaml changed after approval (policy edit), naming both digests", async () => {
    const w = await world();
    await toConsented(w);
    editPrompt(w.suite, "twinlock.yaml", (t) => t.replace("require_signed_receipts: true", "require_signed_receipts: false"));
    const r = await tryAdmit(w);
    expect(r.admitted).toBe(false);
    expect(r.checks.find((c) => c.id === "pin")?.detail).toMatch(
      /changed since it was pinned \(pinned sha256:[0-9a-f]{64}, now sha256:[0-9a-f]{64}\); re-pin/,
    );
  });
});

describe("attack 1b: the agent re-pins or pins what it is judged by", () => {
  it("refuses a re-pin of the pinned suite with the agent's own reviewer key added, signed by the agent's key or by none", async () => {
    const w = await world();
    await toConsented(w);
    const agentPub = generateReviewerKey().publicKey;
    setReviewers(w.suite, [{ name: "mallory", public_key: agentPub, rights: ["review", "consent", "apply", "stop"] }]);
    await expect(pinSuite(w.home, { suiteDir: w.suite, key: w.keys.agent })).rejects.toThrow(
      /only the gate home's pinners may pin .* is not one/,
    );
    await expect(pinSuite(w.home, { suiteDir: w.suite, key: w.keys.planner })).rejects.toThrow(/is not one/);
    await expect(pinSuite(w.home, { suiteDir: w.suite, key: undefined })).rejects.toThrow(/sign with a pinner's key/);
    const r = await tryAdmit(w);
    expect(r.admitted).toBe(false);
    expect(failed(r)).toContain("pin");
  });

  it("refuses a new suite pinned by the agent in a home that already has a pinner, and an unpin without a pinner's key", async () => {
    const w = await world();
    const copy = path.join(w.dir, "agent-suite");
    cpSync(w.suite, copy, { recursive: true });
    setReviewers(copy, [{ name: "alice", public_key: generateReviewerKey().publicKey, rights: ["review", "consent"] }], "agent-suite");
    await expect(pinSuite(w.home, { suiteDir: copy, key: w.keys.agent, allowUnsigned: true })).rejects.toThrow(/is not one/);
    const id = readFileSync(path.join(w.suite, "twinlock.yaml"), "utf8").match(/^suite_id: (.*)$/m)?.[1] as string;
    await expect(unpinSuite(w.home, id, w.keys.agent)).rejects.toThrow(/only the gate home's pinners may unpin/);
    expect(listPins(w.home).map((p) => p.suite_id)).toEqual([id]);
  });

  it("creates no gate home when the first pin is refused, so there is no empty home left to claim", async () => {
    const w = await world();
    const fresh = path.join(w.dir, "fresh-home");
    const unsignedCopy = path.join(w.dir, "unsigned-suite");
    cpSync(w.suite, unsignedCopy, { recursive: true });
    editPrompt(unsignedCopy, "twinlock.yaml", (t) => t.replace("require_signed_receipts: true", "require_signed_receipts: false"));
    await expect(pinSuite(() => openGateHome(fresh, { create: true }), { suiteDir: unsignedCopy, key: w.keys.alice })).rejects.toThrow(
      /does not require signed receipts/,
    );
    expect(existsSync(fresh)).toBe(false);
  });

  it("lets a pinner add another person's key, who may then re-pin", async () => {
    const w = await world();
    const bob = generateReviewerKey();
    await expect(addPinner(w.home, bob.publicKey, w.keys.agent)).rejects.toThrow(/is not one/);
    await addPinner(w.home, bob.publicKey, w.keys.alice);
    await pinSuite(w.home, { suiteDir: w.suite, key: createPrivateKey(bob.privatePem) });
    expect(listPinners(w.home)).toHaveLength(2);
  });
});

describe("attack 2: rollback and forks do not reuse a consent", () => {
  it("refuses a second admission from a copy restored after the first (rolled forward: the consent is used)", async () => {
    const w = await world();
    await toConsented(w);
    const copy = readFileSync(w.runFile);
    expect((await tryAdmit(w)).admitted).toBe(true);
    writeFileSync(w.runFile, copy);
    const again = await tryAdmit(w);
    expect(again.admitted).toBe(false);
    expect(failed(again)).toEqual(expect.arrayContaining(["consumed", "state"]));
  });

  it("admits exactly once across three copies of a consented run", async () => {
    const w = await world();
    await toConsented(w);
    const copies = [1, 2, 3].map((i) => {
      const f = path.join(w.dir, `copy-${i}.json`);
      cpSync(w.runFile, f);
      return f;
    });
    const results = await Promise.all([w.runFile, ...copies].map((f) => tryAdmit(w, "MD-30", f).catch((e: unknown) => e)));
    expect(results.filter((r) => (r as { admitted?: boolean }).admitted === true)).toHaveLength(1);
  });

  it("keeps the admission when the admitted event is deleted and the chain rebuilt: the home rolls the file forward", async () => {
    const w = await world();
    await toConsented(w);
    expect((await tryAdmit(w)).admitted).toBe(true);
    rebuild(w.runFile, (run) => {
      run.events = run.events.filter((e) => e.type !== "admitted");
      const wf = run.state.workflows["MD-29"] as RunFile["state"]["workflows"][string];
      wf.state = "dry_run_ready";
      wf.admissions = [];
      (wf.consents.at(-1) as { consumed_at: string | null }).consumed_at = null;
    });
    expect(readRun(w.runFile, w.home).state.workflows["MD-29"]?.state).toBe("executing");
    const r = await tryAdmit(w);
    expect(r.admitted).toBe(false);
    expect(failed(r)).toEqual(expect.arrayContaining(["consumed", "state"]));
  });

  it("keeps a signed decline that was deleted with the chain rebuilt, and refuses an older rewrite outright", async () => {
    const w = await world();
    await startAndFreeze(w);
    await reviewPairPlan({
      run: w.runFile,
      store: folderRunStore(w.home),
      planner: "MD-29",
      decision: "declined",
      feedback: "no",
      handoffHash: hashOf(w),
      key: w.keys.alice,
    });
    const declined = readFileSync(w.runFile, "utf8");
    rebuild(w.runFile, (run) => {
      run.events = run.events.filter((e) => e.type !== "plan_declined");
      const wf = run.state.workflows["MD-29"] as RunFile["state"]["workflows"][string];
      wf.state = "plan_review_pending";
      wf.reviews = [];
      wf.result = null;
    });
    expect(readFileSync(w.runFile, "utf8")).not.toBe(declined);
    expect(readRun(w.runFile, w.home).state.workflows["MD-29"]?.state).toBe("closed");
    rebuild(w.runFile, (run) => {
      run.events = run.events.filter((e) => e.type !== "review_requested");
    });
    expect(() => readRun(w.runFile, w.home)).toThrow(IntegrityError);
  });

  it("refuses a run from another home, and a run whose checkpoint was deleted, with a recovery message", async () => {
    const w = await world();
    await toConsented(w);
    const other = openGateHome(path.join(w.dir, "other-home"), { create: true });
    await pinSuite(other, { suiteDir: w.suite, key: w.keys.agent });
    await expect(admit({ run: w.runFile, store: folderRunStore(other), executor: "MD-30", actor: "agent" })).resolves.toMatchObject({
      admitted: false,
    });
    expect(() => readRun(w.runFile, other)).toThrow(/belongs to gate home home_[0-9a-f]{16}, not to this one/);
    const id = readRun(w.runFile, w.home).state.run_id;
    rmSync(path.join(w.home.dir, "runs", `${id}.json`));
    expect(() => readRun(w.runFile, w.home)).toThrow(/has no checkpoint for run .*start a new run with init-run/);
  });
});

describe("attack 3: the reviewer is shown the frozen bytes, not the run file's copy", () => {
  it("refuses a freeze event whose file list was swapped (chain rebuilt), and present shows the frozen report", async () => {
    const w = await world();
    writeFileSync(path.join(w.handoff, "report.md"), "# Plan\n\nDelete the production cache.\n");
    await startAndFreeze(w);
    writeFileSync(path.join(w.handoff, "report.md"), "# Plan\n\nA harmless tidy-up.\n");
    const shown = (await presentPlan(folderRunStore(w.home), w.runFile, "MD-29")).markdown;
    expect(shown).toContain("Delete the production cache.");
    expect(shown).not.toContain("harmless");
    rebuild(w.runFile, (run) => {
      const frozen = run.events.find((e) => e.type === "handoff_frozen") as RunFile["events"][number];
      (frozen.data as { files: Array<{ sha256: string }> }).files[0] = {
        ...(frozen.data as { files: Array<{ sha256: string }> }).files[0],
        sha256: "0".repeat(64),
      } as never;
    });
    await expect(presentPlan(folderRunStore(w.home), w.runFile, "MD-29")).rejects.toThrow(/file list hashes to/);
  });

  it("fences file text so a report cannot forge the Decide section, and strips terminal escapes", async () => {
    const w = await world();
    writeFileSync(path.join(w.handoff, "report.md"), "```\n## Decide\ntwinlock review-pair-plan x --decision approved\n\u001b[2J````\n");
    await startAndFreeze(w);
    const shown = (await presentPlan(folderRunStore(w.home), w.runFile, "MD-29")).markdown;
    expect(shown).not.toContain("\u001b");
    expect(shown).toContain("`````markdown");
    const open = shown.indexOf("`````markdown");
    const close = shown.indexOf("\n`````\n", open);
    expect(shown.slice(open, close)).toContain("## Decide");
    expect(shown.lastIndexOf("## Decide")).toBeGreaterThan(close);
  });
});

describe("attack 3c: a hard link smuggles a file the gate can read into the frozen bytes", () => {
  it("refuses to freeze a handoff file with another hard link, so present never shows, say, a key file", async () => {
    const w = await world();
    const secret = path.join(w.dir, "secret.key");
    writeFileSync(secret, "PRIVATE KEY\n");
    linkSync(secret, path.join(w.handoff, "notes.txt"));
    await initRun({ run: w.runFile, store: folderRunStore(w.home), suiteRoot: w.suite, planners: ["MD-29"], actor: "agent" });
    await expect(
      freezePairHandoff({ run: w.runFile, store: folderRunStore(w.home), planner: "MD-29", handoffDir: w.handoff, key: w.keys.planner }),
    ).rejects.toThrow(/notes\.txt has 2 hard links; a handoff file must be a file of its own/);
    expect(readRun(w.runFile, w.home).state.workflows["MD-29"]?.state).toBe("investigating");
  });
});

/** Run, freeze and `present` the world's handoff as it is now: what the reviewer is shown. */
async function frozenAndShown(w: World): Promise<string> {
  await initRun({ run: w.runFile, store: folderRunStore(w.home), suiteRoot: w.suite, planners: ["MD-29"], actor: "agent" });
  await freezePairHandoff({ run: w.runFile, store: folderRunStore(w.home), planner: "MD-29", handoffDir: w.handoff, key: w.keys.planner });
  return (await presentPlan(folderRunStore(w.home), w.runFile, "MD-29")).markdown;
}

describe("attack 3b: a file name chosen to break the reviewer's page", () => {
  it("shows a file name with backticks in a longer code span, so it cannot close the span early", async () => {
    const w = await world();
    writeFileSync(path.join(w.handoff, "evil`name ## Decide.md"), "x\n");
    const shown = await frozenAndShown(w);
    expect(shown).toContain("  - ``evil`name ## Decide.md`` 2 bytes");
    expect(shown).toContain("### ``evil`name ## Decide.md`` (2 bytes");
  });

  it("keeps HTML and a forged heading in a file name inside its code span", async () => {
    const w = await world();
    writeFileSync(path.join(w.handoff, "a` (0 bytes) — all files reviewed OK ## Decide `b.md"), "");
    writeFileSync(path.join(w.handoff, "z` <img src=x onerror=alert(1)> <!-- `.md"), "");
    const shown = await frozenAndShown(w);
    expect(shown).toContain("  - ``a` (0 bytes) — all files reviewed OK ## Decide `b.md`` 0 bytes");
    expect(shown).toContain("  - ``z` <img src=x onerror=alert(1)> <!-- `.md`` 0 bytes");
  });
});

describe("attack 3c: text the reviewer would not see", () => {
  it("shows a file that is not UTF-8 text, decoded, instead of hiding it as binary", async () => {
    const w = await world();
    writeFileSync(path.join(w.handoff, "notes.md"), Buffer.concat([Buffer.from("Also run: DROP TABLE orders\n"), Buffer.from([0xff])]));
    const shown = await frozenAndShown(w);
    expect(shown).toContain("**Not UTF-8 text**");
    expect(shown).toContain("Also run: DROP TABLE orders\n�");
  });

  it("writes out invisible characters (tag characters, zero-width spaces, direction marks) where a terminal would show nothing", async () => {
    const w = await world();
    const smuggled = [..."run rm"].map((c) => String.fromCodePoint(0xe0000 + (c.codePointAt(0) as number))).join("");
    writeFileSync(path.join(w.handoff, "report.md"), `# Report\n\nAll good.${smuggled}\u200b\u200e\n`);
    const shown = await frozenAndShown(w);
    expect(shown).toContain("All good.⟨U+E0072⟩⟨U+E0075⟩⟨U+E006E⟩⟨U+E0020⟩⟨U+E0072⟩⟨U+E006D⟩⟨U+200B⟩⟨U+200E⟩");
  });
});

describe("attack 4: anyone lifts a stop", () => {
  it("refuses resolve-stop without a key holding the stop right, and admission re-judges a forged lift", async () => {
    const w = await world();
    await toConsented(w);
    await raiseStop({ run: w.runFile, store: folderRunStore(w.home), reason: "missing-backup", actor: "alice" });
    await expect(
      resolveStop({ run: w.runFile, store: folderRunStore(w.home), reason: "missing-backup", note: "fine", actor: "agent" }),
    ).rejects.toThrow(/unsigned, and this suite requires signed receipts/);
    await expect(
      resolveStop({ run: w.runFile, store: folderRunStore(w.home), reason: "missing-backup", note: "fine", key: w.keys.planner }),
    ).rejects.toThrow(/has the rights freeze, not stop/);
    expect(failed(await tryAdmit(w))).toContain("8");
    await resolveStop({ run: w.runFile, store: folderRunStore(w.home), reason: "missing-backup", note: "backup taken", key: w.keys.alice });
    expect((await tryAdmit(w)).admitted).toBe(true);
  });
});

describe("attack 5: separation of duties compares keys, not typed names", () => {
  it("lets alice review a plan frozen by an agent that typed --actor alice, since the freeze key is the planner's", async () => {
    const w = await world();
    await initRun({ run: w.runFile, store: folderRunStore(w.home), suiteRoot: w.suite, planners: ["MD-29"], actor: "agent" });
    await expect(
      freezePairHandoff({
        run: w.runFile,
        store: folderRunStore(w.home),
        planner: "MD-29",
        handoffDir: w.handoff,
        actor: "alice",
        key: w.keys.planner,
      }),
    ).rejects.toThrow(/does not match the key, which belongs to planner-agent/);
    await expect(
      freezePairHandoff({ run: w.runFile, store: folderRunStore(w.home), planner: "MD-29", handoffDir: w.handoff, actor: "alice" }),
    ).rejects.toThrow(/unsigned, and this suite requires signed receipts/);
    await freezePairHandoff({
      run: w.runFile,
      store: folderRunStore(w.home),
      planner: "MD-29",
      handoffDir: w.handoff,
      key: w.keys.planner,
    });
    const r = await reviewPairPlan({
      run: w.runFile,
      store: folderRunStore(w.home),
      planner: "MD-29",
      decision: "approved",
      handoffHash: hashOf(w),
      key: w.keys.alice,
    });
    expect(r.workflow.state).toBe("execution_consent_pending");
  });

  it("refuses a freeze signed by an unlisted key", async () => {
    const w = await world();
    await initRun({ run: w.runFile, store: folderRunStore(w.home), suiteRoot: w.suite, planners: ["MD-29"], actor: "agent" });
    await expect(
      freezePairHandoff({ run: w.runFile, store: folderRunStore(w.home), planner: "MD-29", handoffDir: w.handoff, key: w.keys.agent }),
    ).rejects.toThrow(/signed by an unknown key/);
  });
});

describe("attack 6: what admission checks is what the executor uses", () => {
  it("writes a read-only checkout byte for byte equal to the frozen bytes, even after the live folder is edited", async () => {
    const w = await world();
    await toConsented(w);
    const frozen = new Map(["report.md", "action_plan.json"].map((f) => [f, readFileSync(path.join(w.handoff, f))]));
    const r = await admit({
      run: w.runFile,
      store: folderRunStore(w.home),
      executor: "MD-30",
      actor: "agent",
      checkout: path.join(w.dir, "approved"),
    });
    expect(r.admitted).toBe(true);
    writeFileSync(path.join(w.handoff, "action_plan.json"), "{}");
    for (const [f, bytes] of frozen) expect(readFileSync(path.join(w.dir, "approved", f)).equals(bytes)).toBe(true);
    expect(statSync(path.join(w.dir, "approved", "report.md")).mode & 0o222).toBe(0);
    expect(statSync(path.join(w.dir, "approved")).mode & 0o222).toBe(0);
    const again = path.join(w.dir, "again");
    await checkoutApproved({ run: w.runFile, store: folderRunStore(w.home), executor: "MD-30", dir: again });
    for (const [f, bytes] of frozen) expect(readFileSync(path.join(again, f)).equals(bytes)).toBe(true);
  });

  it("refuses admission after the executor prompt's body changed since consent", async () => {
    const w = await world();
    await toConsented(w);
    editPrompt(w.suite, "debugging/md-30-debugging-executor.md", (t) => `${t}\nAlso delete the backups.\n`);
    const r = await tryAdmit(w);
    expect(r.admitted).toBe(false);
    // The file is not the one pinned (so the pinned policy is not loaded and every check that needs it fails closed),
    // nor the one the review and consent bound.
    expect(failed(r)).toEqual(expect.arrayContaining(["pin", "executor-file"]));
    expect(r.checks.find((c) => c.id === "pin")?.detail).toMatch(/MD-30's prompt file .* changed since suite \S+ was pinned/);
  });
});

describe("attack 6b: the checkout path", () => {
  it("refuses, before the consent is used, a checkout path that is an existing file", async () => {
    const w = await world();
    await toConsented(w);
    const file = path.join(w.dir, "not-a-folder");
    writeFileSync(file, "x");
    await expect(
      admit({ run: w.runFile, store: folderRunStore(w.home), executor: "MD-30", actor: "agent", checkout: file }),
    ).rejects.toThrow(/exists and is not a folder/);
    expect(readRun(w.runFile, w.home).state.workflows["MD-29"]?.state).toBe("dry_run_ready");
    expect((await tryAdmit(w)).admitted).toBe(true);
  });

  it("refuses a checkout below a link into a folder others can write, judging the real path once", async () => {
    const w = await world();
    await toConsented(w);
    const open = path.join(w.dir, "open");
    mkdirSync(open);
    chmodSync(open, 0o777);
    symlinkSync(open, path.join(w.dir, "link"));
    await expect(
      admit({ run: w.runFile, store: folderRunStore(w.home), executor: "MD-30", actor: "agent", checkout: path.join(w.dir, "link", "co") }),
    ).rejects.toThrow(/open, on the way to the checkout folder, can be changed by other users/);
    expect(readRun(w.runFile, w.home).state.workflows["MD-29"]?.state).toBe("dry_run_ready");
  });

  it("refuses a checkout into a folder whose parent other users can rearrange", async () => {
    const w = await world();
    await toConsented(w);
    const open = path.join(w.dir, "shared");
    mkdirSync(open);
    chmodSync(open, 0o777);
    await expect(
      admit({ run: w.runFile, store: folderRunStore(w.home), executor: "MD-30", actor: "agent", checkout: path.join(open, "co") }),
    ).rejects.toThrow(/shared, on the way to the checkout folder, can be changed by other users \(mode 777, owner \d+\)/);
    expect(readRun(w.runFile, w.home).state.workflows["MD-29"]?.state).toBe("dry_run_ready");
  });
});

describe("attack 7: a policy change between approval and admission", () => {
  it("refuses admission under a re-pinned policy the decisions were not made under", async () => {
    const w = await world();
    await toConsented(w);
    editPrompt(w.suite, "twinlock.yaml", (t) => t.replace("required_approvals: 1", "required_approvals: 1 # relaxed"));
    await pinSuite(w.home, { suiteDir: w.suite, key: w.keys.alice });
    const r = await tryAdmit(w);
    expect(r.admitted).toBe(false);
    expect(failed(r)).toEqual(["policy"]);
  });
});

describe("attack 8: a run file replaced by a FIFO", () => {
  it("is refused at once as not a regular file", async () => {
    const w = await world();
    await toConsented(w);
    rmSync(w.runFile);
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [w.runFile]);
    await expect(tryAdmit(w)).rejects.toThrow(/is not a regular file \(a FIFO\)/);
  });
});

describe("the gate home itself", () => {
  it("refuses a group- or world-writable home, as ssh refuses loose key files", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-loose-home-"));
    dirs.push(dir);
    mkdirSync(path.join(dir, "home"), { mode: 0o777 });
    chmodSync(path.join(dir, "home"), 0o777);
    expect(() => openGateHome(path.join(dir, "home"))).toThrow(/writable by every user \(mode 777\).*chmod 700/);
  });

  it("refuses an old run file (format twinlock-run/1) with a message to start a new run", async () => {
    const w = await world();
    await toConsented(w);
    const run = JSON.parse(readFileSync(w.runFile, "utf8"));
    run.format = "twinlock-run/1";
    writeFileSync(w.runFile, JSON.stringify(run));
    expect(() => readRun(w.runFile, w.home)).toThrow(/made by an older twinlock without a gate home.*start a new run/);
  });

  it("rolls a run file one write behind forward with the events the home recorded (crash between the two writes)", async () => {
    const w = await world();
    await initRun({ run: w.runFile, store: folderRunStore(w.home), suiteRoot: w.suite, planners: ["MD-29"], actor: "agent" });
    const before = readFileSync(w.runFile);
    await raiseStop({ run: w.runFile, store: folderRunStore(w.home), reason: "halt", actor: "alice" });
    writeFileSync(w.runFile, before);
    const recovered = readRun(w.runFile, w.home);
    expect(recovered.state.stops.map((s) => s.reason)).toEqual(["halt"]);
    // The next write puts the recovered events in the file itself, then appends its own.
    await raiseStop({ run: w.runFile, store: folderRunStore(w.home), reason: "second", actor: "alice" });
    expect(readRun(w.runFile, w.home).state.stops.map((s) => s.reason)).toEqual(["halt", "second"]);
    // Two writes behind is not a crash: refused, naming the checkpoint.
    writeFileSync(w.runFile, before);
    expect(() => readRun(w.runFile, w.home)).toThrow(IntegrityError);
  });
});

describe("attack 9: planted leftovers beside the run file", () => {
  it("never deletes through a link or a planted tree named like a dead writer's lock folder", async () => {
    const w = await world();
    await initRun({ run: w.runFile, store: folderRunStore(w.home), suiteRoot: w.suite, planners: ["MD-29"], actor: "agent" });
    const victim = path.join(w.dir, "victim");
    mkdirSync(victim);
    writeFileSync(path.join(victim, "pins.json"), "precious\n");
    const planted = `${w.runFile}.lock.dead-999999-abcd`;
    mkdirSync(path.join(planted, "a"), { recursive: true });
    writeFileSync(path.join(planted, "a", "f0"), "");
    symlinkSync(victim, path.join(planted, "link"));
    symlinkSync(victim, `${w.runFile}.lock.dead-999998-abcd`);
    await raiseStop({ run: w.runFile, store: folderRunStore(w.home), reason: "halt", actor: "alice" });
    expect(readFileSync(path.join(victim, "pins.json"), "utf8")).toBe("precious\n");
    expect(existsSync(path.join(planted, "a", "f0"))).toBe(true);
    // The run's lock is the gate home's: nothing named like a lock beside the run file is the gate's, so it is left as it is.
    expect(lstatSync(`${w.runFile}.lock.dead-999998-abcd`).isSymbolicLink()).toBe(true);
    expect(existsSync(victim)).toBe(true);
  });

  it("keygen never writes through a dangling link planted at NAME.pub", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-keygen-link-"));
    dirs.push(dir);
    const target = path.join(dir, "gate-only", "planted");
    mkdirSync(path.dirname(target));
    symlinkSync(target, path.join(dir, "x.pub"));
    const { runCli } = await import("../test-support/run-cli.js");
    const r = await runCli(["keygen", "--name", "x", "--out", dir]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/already exists; keys are never overwritten/);
    expect(existsSync(target)).toBe(false);
    expect(existsSync(path.join(dir, "x.key"))).toBe(false);
  });
});

describe("attack 10: the run file's folder swapped for a link while the gate writes", () => {
  it("refuses a run file under a folder other users can change, so nobody can flip its path into the gate home", async () => {
    const w = await world();
    const agent = path.join(w.dir, "agent");
    mkdirSync(path.join(agent, "real"), { recursive: true });
    chmodSync(agent, 0o777);
    symlinkSync("real", path.join(agent, "s"));
    await expect(
      initRun({
        run: path.join(agent, "s", "pins.json"),
        store: folderRunStore(w.home),
        suiteRoot: w.suite,
        planners: ["MD-29"],
        actor: "agent",
      }),
    ).rejects.toThrow(/the run file's folder .*agent\/real sits under .*agent, which other users can change \(mode 777/);
    expect(existsSync(path.join(agent, "real", "pins.json"))).toBe(false);
  });

  it.skipIf(process.getuid?.() !== 0)("refuses a run folder in a sticky folder when the run folder belongs to another user", async () => {
    const w = await world();
    const sticky = path.join(w.dir, "sticky");
    mkdirSync(sticky);
    chmodSync(sticky, 0o1777);
    const theirs = path.join(sticky, "theirs");
    mkdirSync(theirs);
    const { chownSync } = await import("node:fs");
    chownSync(theirs, 4242, 4242); // only root can give the folder to another user

    await expect(
      initRun({
        run: path.join(theirs, "run.json"),
        store: folderRunStore(w.home),
        suiteRoot: w.suite,
        planners: ["MD-29"],
        actor: "agent",
      }),
    ).rejects.toThrow(/sits under .*sticky, which other users can change/);
  });

  it("refuses a run file that is itself a symbolic link", async () => {
    const w = await world();
    await toConsented(w);
    const link = path.join(w.dir, "link.json");
    symlinkSync(w.runFile, link);
    await expect(admit({ run: link, store: folderRunStore(w.home), executor: "MD-30", actor: "agent" })).rejects.toThrow(
      /run file .*link\.json is a symbolic link; give the run file itself/,
    );
  });
});

describe("attack 11: the agent records its own passed dry run", () => {
  it("refuses a dry-run result without a key holding the apply right, so dry_run_required is a person's check", async () => {
    const w = await world();
    editPrompt(w.suite, "debugging/md-30-debugging-executor.md", (t) =>
      t.replace("exact_twin_only: true", "exact_twin_only: true\ndry_run_required: true"),
    );
    await pinSuite(w.home, { suiteDir: w.suite, key: w.keys.alice });
    await toConsented(w);
    expect(
      (await admit({ run: w.runFile, store: folderRunStore(w.home), executor: "MD-30", actor: "agent", purpose: "dry-run" })).admitted,
    ).toBe(true);
    const record = (key?: KeyObject, actor?: string) =>
      recordDryRunResult({ run: w.runFile, store: folderRunStore(w.home), executor: "MD-30", result: "passed", note: "fine", key, actor });
    await expect(record(undefined, "alice")).rejects.toThrow(/dry_run_result receipt by alice is unsigned.*the apply right/);
    await expect(record(w.keys.planner)).rejects.toThrow(/has the rights freeze, not apply/);
    expect(failed(await tryAdmit(w))).toEqual(["dry-run"]);
    await record(w.keys.alice);
    expect((await tryAdmit(w)).admitted).toBe(true);
  });
});

describe("attack 12: a hostile suite offered for pinning", () => {
  it("refuses a key that may not pin before reading anything of the suite", async () => {
    const w = await world();
    const copy = path.join(w.dir, "agent-suite");
    cpSync(w.suite, copy, { recursive: true });
    // A FIFO prompt would hang (or at least be read) if the suite were walked first.
    const { execFileSync } = await import("node:child_process");
    execFileSync("mkfifo", [path.join(copy, "trap.md")]);
    await expect(pinSuite(w.home, { suiteDir: copy, key: w.keys.planner, allowUnsigned: true })).rejects.toThrow(
      /only the gate home's pinners may pin/,
    );
  });
});

describe("attack 9: text that reads one way to a person and another way to twinlock", () => {
  it("refuses to pin a twinlock.yaml whose comment hides a policy behind a lone carriage return", async () => {
    const w = await world();
    const file = path.join(w.suite, "twinlock.yaml");
    const text = readFileSync(file, "utf8").replace("  separate_duties: true\n", "  separate_duties: false #\r  separate_duties: true \n");
    writeFileSync(file, text);
    await expect(pinSuite(w.home, { suiteDir: w.suite, key: w.keys.alice })).rejects.toThrow(/U\+000D, a control or direction character/);
  });

  it("refuses a planner whose frontmatter hides a second paired_prompt_id behind a carriage return", async () => {
    const w = await world();
    await toConsented(w);
    const planner = path.join(w.suite, "debugging", "md-29-debugging-planner.md");
    writeFileSync(
      planner,
      readFileSync(planner, "utf8").replace("paired_prompt_id: MD-30\n", "paired_prompt_id: MD-30 # twin\rpaired_prompt_id: MD-26\n"),
    );
    const r = await tryAdmit(w);
    expect(r.admitted).toBe(false);
  });

  it("refuses admission while a second file that may declare the executor's ID cannot be read as a prompt (a NUL byte)", async () => {
    const w = await world();
    await toConsented(w);
    const decoy = readFileSync(path.join(w.suite, "debugging", "md-26-quick-hotfix-applier.md"), "utf8").replace(
      "prompt_id: MD-26",
      "prompt_id: MD-30",
    );
    writeFileSync(path.join(w.suite, "debugging", "md-30-copy.md"), `${decoy}\u0000`);
    const r = await tryAdmit(w);
    expect(r.admitted).toBe(false);
    expect(JSON.stringify(r)).toMatch(/cannot read as a prompt, which may declare MD-29 or MD-30.*NUL byte/);
  });

  it("refuses admission while a copy of the executor saved as UTF-16 (whose bytes never spell MD-30) sits in the suite", async () => {
    const w = await world();
    await toConsented(w);
    const copy = readFileSync(path.join(w.suite, "debugging", "md-30-debugging-executor.md"), "utf8");
    writeFileSync(
      path.join(w.suite, "debugging", "md-30-debugging-executor.v2.md"),
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(copy, "utf16le")]),
    );
    const r = await tryAdmit(w);
    expect(r.admitted).toBe(false);
    expect(JSON.stringify(r)).toMatch(/md-30-debugging-executor\.v2\.md.*(NUL byte|not valid UTF-8)/);
  });

  it("finds a re-routing key inside a list, in a mapping's keys, and refuses tagged collections", async () => {
    const w = await world();
    await toConsented(w);
    const planner = path.join(w.suite, "debugging", "md-29-debugging-planner.md");
    const original = readFileSync(planner, "utf8");
    for (const extra of [
      "notes:\n  - fallback_executor: MD-26\n",
      "executor_routes:\n  MD-26: preferred\n",
      "routing: !!omap\n  - fallback_executor: MD-26\n",
    ]) {
      writeFileSync(planner, original.replace("\n---\n", `\n${extra}---\n`));
      const r = await tryAdmit(w);
      expect(r.admitted, extra).toBe(false);
    }
  });
});

/** The agent's part of every attack's setup: a run on the pinned suite and its handoff frozen with the planner's key. */
async function startAndFreeze(w: World): Promise<void> {
  await initRun({ run: w.runFile, store: folderRunStore(w.home), suiteRoot: w.suite, planners: ["MD-29"], actor: "agent" });
  await freezePairHandoff({ run: w.runFile, store: folderRunStore(w.home), planner: "MD-29", handoffDir: w.handoff, key: w.keys.planner });
}

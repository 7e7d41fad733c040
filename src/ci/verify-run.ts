import path from "node:path";
import { actionTargetGlobs, literalPathScope, type PathScope, pathScope } from "../conformance/action-targets.js";
import { type ChangedFile, GITLINK, kindOf, sameChange } from "../conformance/check-conformance.js";
import { folderSource } from "../handoff/handoff-source.js";
import { hashHandoff } from "../handoff/hash-handoff.js";
import { selectHandoffFormat } from "../handoff/select-handoff-format.js";
import { receiptHash } from "../run/receipt-hash.js";
import { RECEIPT_KINDS, RECEIPT_ROWS } from "../run/receipt-kinds.js";
import type { RunState, Workflow } from "../run/run-schema.js";
import { readRunFileUnverified, verifyRunFile } from "../store/run-file.js";
import { resolveHandoffDir } from "../store/run-store.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { judgeGateSignatures, trustedGateKeys } from "../trust/gate-statement.js";
import { judgeReceiptTrust, type Right } from "../trust/judge-receipt-trust.js";
import { rejudgeAdmissions } from "./rejudge-admissions.js";

/** What a CI verification checks, one kind per line of its report. */
export type VerifyCheck =
  | "chain"
  | "gate"
  | "change"
  | "receipt"
  | "admission"
  | "outcome"
  | "handoff"
  | "verified-change"
  | "changed-file";

/** One finding: what was checked, of what, whether it holds, and why. */
export interface VerifyFinding {
  check: VerifyCheck;
  ok: boolean;
  subject: string;
  message: string;
}

/** A CI verification's findings; `ok` when none fails. */
export interface VerifyReport {
  ok: boolean;
  run_id: string | null;
  trust_source: string;
  findings: VerifyFinding[];
}

/**
 * Verify a run for CI without a gate home (SPEC §9's trust root is not on a
 * CI runner): the event chain and replay (as `verify-log`); the head and
 * every record the gate makes signed by a gate the trust file's
 * `gate_keys:` pins (a chain rebuilt from genuine receipts fails here, whatever
 * the checks below find); every person's
 * receipt against the trusted reviewers, signed and with its right whatever
 * the suite's own policy says; each executed workflow admitted on the exact
 * hash that was approved and consented, with its consent named by hash, and
 * every admission re-judged from the facts recorded before it (stops, expiry,
 * one admission per consent: `rejudgeAdmissions`); the
 * handoff folder in the checkout equal to that hash (its action targets are
 * read from there); and each changed file inside the run's own records or
 * an admitted action's target of a pair whose consent still covers it (see
 * `judgeChangedFile`), else named as a deviation with the pairs whose
 * targets hold it.
 */
export async function verifyRun(input: {
  runFile: string;
  trust: { config: SuiteConfig; source: string; ciIdentity?: { name: string; public_key: string } };
  /** Changed files relative to `root`; none given: the change is not checked. */
  changed?: readonly ChangedFile[];
  root: string;
  /** The change under test (`OWNER/REPO#NUMBER`): the run must have been made for exactly it. */
  change?: string;
  /** Where the suite lies in the checkout, which a team-store run's `suite:` handoff folder is read from (default `root`). */
  suiteRoot?: string;
}): Promise<VerifyReport> {
  const findings: VerifyFinding[] = [];
  const add = (check: VerifyCheck, ok: boolean, subject: string, message: string) => findings.push({ check, ok, subject, message });
  const file = readRunFileUnverified(input.runFile);
  const verdict = verifyRunFile(file);
  if (!verdict.ok) {
    add("chain", false, "run", `first bad event ${verdict.seq}: ${verdict.reason}`);
    return { ok: false, run_id: null, trust_source: input.trust.source, findings };
  }
  add("chain", true, "run", `${file.events.length} events, chain intact, state equals the replay (head ${file.head})`);
  // A chain proves only itself: its head and the gate's own records must be signed by a gate the trust file pins.
  const gate = judgeGateSignatures(file, trustedGateKeys(input.trust.config));
  add(
    "gate",
    gate.ok,
    "run",
    gate.ok
      ? `head signed by trusted gate ${gate.headKey?.slice(0, 28)}…, and its ${gate.records} gate record${gate.records === 1 ? "" : "s"} by trusted gates`
      : `${gate.code}: ${gate.reason}`,
  );
  if (input.change !== undefined) {
    // The run says which change it is for, under the gate's signature checked above: one approved run cannot pass another change.
    const bound = file.state.change;
    add(
      "change",
      bound === input.change,
      "run",
      bound === input.change
        ? `made for ${bound}`
        : bound === undefined
          ? `made for no change, and this is ${input.change}: start the run with \`init-run --for-change ${input.change}\``
          : `made for ${bound}, not ${input.change}: an approved run passes only the change it was made for`,
    );
  }
  const config: SuiteConfig = { ...input.trust.config, policies: { ...input.trust.config.policies, require_signed_receipts: true } };
  const runAbs = path.resolve(input.runFile);
  // A team-store run names its handoff folder from the suite's root; any other relative one lies beside the run file.
  const handoffBase = {
    runFolder: path.dirname(runAbs),
    suiteRoot: path.resolve(input.suiteRoot ?? input.root),
    repoRoot: path.resolve(input.root),
  };
  // The admitted event is the run's claim that the gate admitted; CI re-judges it from the facts recorded before it.
  const rejudged = rejudgeAdmissions(file.events, config);
  // Globs come only from admitted actions' targets; the run file and handoff folders are paths, compared literally
  // (an agent names its handoff folder, and a folder called `**` must not mean everything).
  const literal: string[] = [ownPath(input.root, runAbs)].filter((p): p is string => p !== undefined);
  const pairs: PairScope[] = [];
  for (const wf of Object.values(file.state.workflows)) {
    for (const [receipt, right] of decisions(file.state, wf)) {
      const v = judgeReceiptTrust(receipt, right, config);
      // The trust file's CI identity holds only the verify right, so its one receipt is the close CI signed after verify passed.
      const byCi = v.ok && receipt.kind === "verification" && isCiIdentity(receipt, input.trust.ciIdentity);
      add(
        "receipt",
        v.ok,
        `${wf.planner} rev ${receipt.revision} ${receipt.kind}`,
        v.ok ? `signed by ${v.signer}${byCi ? ", the trust file's CI identity" : ""}` : v.reason,
      );
    }
    const rejudgedProblems = rejudged
      .filter((r) => r.planner === wf.planner)
      .flatMap((r) => r.problems.map((p) => `admission at event ${r.seq}: ${p}`));
    const admitted = await checkAdmission(wf, handoffBase, config, rejudgedProblems, add);
    const held = wf.admissions.length > 0 ? checkOutcome(file.state, wf, config, add) : [];
    if (admitted) pairs.push(pairScope(wf, admitted, held));
    // Only an admitted workflow's handoff folder (its hash checked against the admission) is the run's own record.
    const handoffDir = admitted && wf.handoff ? ownPath(input.root, resolveHandoffDir(wf.handoff.dir, handoffBase)) : undefined;
    if (handoffDir) literal.push(`${handoffDir}/`);
  }
  if (input.changed) {
    const ownRecords = literalPathScope(literal);
    for (const wf of Object.values(file.state.workflows))
      checkVerifiedChange(
        wf,
        input.changed,
        ownRecords,
        pathScope(pairs.find((p) => p.planner === wf.planner)?.actions.flatMap((a) => a.globs) ?? []),
        pathScope(pairs.filter((p) => p.planner !== wf.planner).flatMap((p) => p.actions.flatMap((a) => a.globs))),
        add,
      );
    for (const f of input.changed) {
      // A submodule pointer is a commit id: what it points to is nothing this check reads, so it never passes as a file.
      if (f.mode === GITLINK) {
        add(
          "changed-file",
          false,
          f.path,
          "deviation: a submodule pointer, not a file; what its commit holds is not judged against the plan",
        );
        continue;
      }
      if (ownRecords.includes(f.path)) {
        add("changed-file", true, f.path, "inside the plan: the run's own records");
        continue;
      }
      const judged = judgeChangedFile(f.path, pairs);
      add("changed-file", judged.ok, f.path, judged.message);
    }
  }
  return { ok: findings.every((f) => f.ok), run_id: file.state.run_id, trust_source: input.trust.source, findings };
}

/**
 * What happened after the admission: an admitted pair passes only while it
 * executes with no stop open on it or the run (a stop counts as lifted only by
 * a resolution a trusted reviewer signed with the stop right), or once closed
 * verified. A failed, rolled back or abandoned close, or a stop, fails it.
 * Returns the problems (none when it passes).
 */
function checkOutcome(
  state: RunState,
  wf: Workflow,
  config: SuiteConfig,
  add: (check: VerifyCheck, ok: boolean, subject: string, message: string) => void,
): string[] {
  const subject = `${wf.planner}→${wf.executor}`;
  const held = state.stops.filter(
    (s) =>
      (s.workflow === null || s.workflow === wf.planner) &&
      (s.resolved_at === null ||
        s.resolution_receipt === null ||
        !judgeReceiptTrust(s.resolution_receipt, RECEIPT_KINDS.stop_resolution.right, config).ok),
  );
  const outcome = wf.result?.outcome;
  const problems = [
    ...held.map(
      (s) =>
        `stopped: ${s.reason}${s.workflow === null ? " on the whole run" : ""}${s.resolved_at === null ? "" : " (lifted without a trusted stop signature)"}`,
    ),
    ...(wf.state === "failed" || (outcome !== undefined && outcome !== "verified")
      ? [`closed ${outcome ?? wf.state}: not approved work that was verified`]
      : []),
    // Verified is a person's call: on a signing suite, a verified close needs their verification receipt (judged with the decisions).
    ...(outcome === "verified" && config.policies?.require_signed_receipts === true && !wf.result?.receipt
      ? ["closed verified without a verification receipt signed by a person with the verify right"]
      : []),
  ];
  add(
    "outcome",
    problems.length === 0,
    subject,
    problems.length === 0 ? (outcome === "verified" ? "closed verified" : "executing, no stop open") : problems.join("; "),
  );
  return problems;
}

/**
 * What one admitted pair lets the change hold: the globs of each action the
 * person consented to and the gate admitted, and how far they still reach.
 * `open`: the pair executes (its admission holds, no stop, not closed), so a
 * change inside its targets is its work. `closed`: it closed verified, so
 * only the files its close recorded are its work (the verified-change check
 * holds their digests); anything else in its targets was made under no
 * consent still running. `held`: its admission does not hold, a stop is open
 * on it, or it closed otherwise: its targets let nothing through.
 */
interface PairScope {
  planner: string;
  subject: string;
  actions: { id: string; globs: string[]; scope: PathScope }[];
  reach: { kind: "open" } | { kind: "closed"; recorded: ReadonlySet<string> } | { kind: "held"; why: string };
}

function pairScope(wf: Workflow, admitted: AdmittedPlan, held: readonly string[]): PairScope {
  const recorded = wf.result?.outcome === "verified" ? wf.result.execution?.changed_files : undefined;
  return {
    planner: wf.planner,
    subject: `${wf.planner}→${wf.executor}`,
    actions: admitted.actions.map((a) => ({ ...a, scope: pathScope(a.globs) })),
    reach: !admitted.ok
      ? { kind: "held", why: "its admission does not hold" }
      : held.length > 0
        ? { kind: "held", why: held[0] as string }
        : wf.result?.outcome === "verified"
          ? { kind: "closed", recorded: new Set((recorded ?? []).map((f) => f.path)) }
          : { kind: "open" },
  };
}

/**
 * One changed path (not the run's own records, not a submodule pointer) held
 * against every admitted pair: inside the plan when a pair whose consent
 * still reaches it holds it in an admitted action's target (named with the
 * pair and the action), else a deviation naming each pair whose targets hold
 * it and why that pair does not cover it, or that no admitted target does.
 */
function judgeChangedFile(rel: string, pairs: readonly PairScope[]): { ok: boolean; message: string } {
  const holding = pairs
    .map((p) => ({ p, ids: p.actions.filter((a) => a.scope.includes(rel)).map((a) => a.id) }))
    .filter((h) => h.ids.length > 0);
  const covering = holding.filter(({ p }) => p.reach.kind === "open" || (p.reach.kind === "closed" && p.reach.recorded.has(rel)));
  const name = (h: (typeof holding)[number]) => `${h.p.subject} (${h.ids.length === 1 ? "action" : "actions"} ${h.ids.join(", ")})`;
  if (covering.length > 0) return { ok: true, message: `inside the plan of ${covering.map(name).join(" and ")}` };
  if (holding.length === 0) return { ok: false, message: "deviation: outside every admitted action's target and the run's own records" };
  const why = holding.map((h) =>
    h.p.reach.kind === "closed"
      ? `inside the target of ${name(h)}, which closed verified without it: no running consent covers it`
      : `inside the target of ${name(h)}, which covers nothing now (${h.p.reach.kind === "held" ? h.p.reach.why : ""})`,
  );
  return { ok: false, message: `deviation: ${why.join("; ")}` };
}

/**
 * A pair closed verified with its change recorded: the change under test must
 * be that change, each file with the digest the person's close judged. A file
 * changed again after the close (another commit pushed on the head), or one
 * the close never saw, is work nobody verified. The run's own records are
 * left out: the run file and handoff folder move after the close.
 */
function checkVerifiedChange(
  wf: Workflow,
  changed: readonly ChangedFile[],
  ownRecords: { includes: (p: string) => boolean },
  ownTargets: { includes: (p: string) => boolean },
  otherTargets: { includes: (p: string) => boolean },
  add: (check: VerifyCheck, ok: boolean, subject: string, message: string) => void,
): void {
  const recorded = wf.result?.outcome === "verified" ? wf.result.execution?.changed_files : undefined;
  if (recorded === undefined) return;
  const closed = new Map(recorded.filter((f) => !ownRecords.includes(f.path)).map((f) => [f.path, f]));
  // Another pair's files are that pair's to have verified (a run of several pairs closes each on its own files); a
  // file inside no admitted target is one this close never saw, as much as one inside its own.
  const ours = (p: string) => closed.has(p) || ownTargets.includes(p) || !otherTargets.includes(p);
  const now = new Map(changed.filter((f) => !ownRecords.includes(f.path) && ours(f.path)).map((f) => [f.path, f]));
  // The digest, and what the path is when it is not a plain file (an executable, a symlink, a submodule pointer).
  const short = (f: ChangedFile) =>
    f.sha256 === null ? "deleted" : `${f.sha256.slice(0, 19)}…${f.mode === undefined || f.mode === "100644" ? "" : ` ${kindOf(f)}`}`;
  const differ = [
    ...[...now].flatMap(([p, f]) => {
      const then = closed.get(p);
      if (!then) return [`${p} (not in the verified change: the close never saw it)`];
      return sameChange(then, f) ? [] : [`${p} (${short(then)} when verified, now ${short(f)})`];
    }),
    ...[...closed.keys()].filter((p) => !now.has(p)).map((p) => `${p} (in the verified change, not in this one)`),
  ];
  const shown = differ.length > 5 ? [...differ.slice(0, 5), `${differ.length - 5} more`] : differ;
  add(
    "verified-change",
    differ.length === 0,
    `${wf.planner}→${wf.executor}`,
    differ.length === 0
      ? `the change under test is the one closed verified (${closed.size} file${closed.size === 1 ? "" : "s"}, the same digests and modes)`
      : `the change under test is not the one closed verified: ${shown.join("; ")}; a closed pair is not closed again: push only what was verified, or start a new run for the new change`,
  );
}

/** A workflow's decisions that a person signs, each with the right it needs: what CI (`verify`) judges, from RECEIPT_KINDS. */
export function decisions(state: RunState, wf: Workflow): Array<[{ kind: string; revision?: number } & Record<string, unknown>, Right]> {
  return RECEIPT_ROWS.flatMap((row) => {
    const right = row.right;
    if (!row.ciJudged || right === null) return [];
    return row
      .held(state)
      .filter((h) => h.planner === wf.planner)
      .map((h) => [h.receipt, right] as [typeof h.receipt, Right]);
  });
}

/**
 * The admission of a workflow that reached execution, held against the
 * approved review and the consent it names; then the handoff folder in the
 * checkout re-hashed and read for the admitted actions' targets, with
 * whether the admission holds. Undefined when the workflow never executed,
 * or its plan cannot be read (then nothing is inside its plan).
 */
async function checkAdmission(
  wf: Workflow,
  handoffBase: { runFolder: string; suiteRoot: string },
  config: SuiteConfig,
  rejudged: readonly string[],
  add: (check: VerifyCheck, ok: boolean, subject: string, message: string) => void,
): Promise<AdmittedPlan | undefined> {
  const admission = wf.admissions[wf.admissions.length - 1];
  const subject = `${wf.planner}→${wf.executor}`;
  if (!admission) {
    const executed = wf.state === "executing" || ["verified", "failed", "rolled_back"].includes(wf.result?.outcome ?? "");
    if (executed) add("admission", false, subject, "executed without an admission receipt");
    else
      add(
        "admission",
        true,
        subject,
        `not executed (${wf.state}${wf.result ? `, ${wf.result.outcome}` : ""}): nothing it changes is approved`,
      );
    return undefined;
  }
  const consent = wf.consents.find((c) => receiptHash(c) === admission.consent_hash);
  const review = wf.reviews.find(
    (r) => r.decision === "approved" && r.handoff_hash === admission.handoff_hash && r.revision === admission.revision,
  );
  const problems = [
    !review && `no approved review of ${admission.handoff_hash} revision ${admission.revision}`,
    !consent && `the consent ${admission.consent_hash} it names is not in the run`,
    consent && consent.decision !== "approved" && "the consent it names was declined",
    consent &&
      consent.handoff_hash !== admission.handoff_hash &&
      `the consent is for ${consent.handoff_hash}, not the admitted ${admission.handoff_hash}`,
    consent && consent.executor !== admission.executor && `the consent names ${consent.executor}, not the admitted ${admission.executor}`,
    admission.executor !== wf.executor && `${admission.executor} is not this pair's executor ${wf.executor}`,
    wf.handoff?.hash !== admission.handoff_hash && `the handoff was re-frozen after admission (now ${wf.handoff?.hash})`,
    admission.checks.some((c) => !c.ok) && "the admission receipt records a failed check",
    ...rejudged,
  ].filter((p): p is string => typeof p === "string");
  add(
    "admission",
    problems.length === 0,
    subject,
    problems.length === 0 ? `admitted on the approved and consented hash ${admission.handoff_hash}` : problems.join("; "),
  );
  if (!wf.handoff) return undefined;
  const dir = resolveHandoffDir(wf.handoff.dir, handoffBase);
  let hash: string;
  try {
    hash = (await hashHandoff(dir)).hash;
  } catch (error) {
    add(
      "handoff",
      false,
      subject,
      `the handoff folder ${wf.handoff.dir} cannot be hashed in the checkout (${(error as Error).message}); commit it with the run`,
    );
    return undefined;
  }
  if (hash !== admission.handoff_hash) {
    add(
      "handoff",
      false,
      subject,
      `the handoff folder ${wf.handoff.dir} in the checkout hashes to ${hash}, not the admitted ${admission.handoff_hash}`,
    );
    return undefined;
  }
  if (config.handoff?.format === "custom") {
    add(
      "handoff",
      false,
      subject,
      "the trust file names a custom handoff format, whose schemas CI does not read; its action targets cannot be checked",
    );
    return undefined;
  }
  const { model, problems: unread } = selectHandoffFormat(config.handoff).read(folderSource(dir));
  // Only the actions the person consented to and the gate admitted scope a change: a planned action left out is not approved work.
  const admitted = new Set(admission.requested.actions);
  const actions = model.actions.filter((a) => admitted.has(a.id));
  const targets = actions.flatMap((a) => actionTargetGlobs(a.target));
  const readable = unread.length === 0;
  add(
    "handoff",
    unread.length === 0,
    subject,
    unread.length === 0
      ? `the approved bytes are in the checkout; ${actions.length} of the plan's ${model.actions.length} actions admitted (${actions.map((a) => a.id).join(", ") || "none"}), targets ${targets.join(", ") || "(none)"}`
      : `the approved plan does not read: ${unread[0]?.message}`,
  );
  return {
    ok: problems.length === 0 && readable,
    actions: actions.map((a) => ({ id: a.id, globs: actionTargetGlobs(a.target) })),
  };
}

/** An admitted pair's plan as CI read it: each admitted action's target globs, and whether the admission and its plan hold. */
interface AdmittedPlan {
  ok: boolean;
  actions: { id: string; globs: string[] }[];
}

/** A path as a POSIX path relative to the checkout root, or undefined when it lies outside it. */
function ownPath(root: string, abs: string): string | undefined {
  const rel = path.relative(path.resolve(root), abs);
  return rel === "" || rel.startsWith("..") || path.isAbsolute(rel) ? undefined : rel.split(path.sep).join("/");
}

/** Whether a trusted receipt is signed by the trust file's CI identity: its key, not merely its name. */
function isCiIdentity(receipt: Record<string, unknown>, ci: { name: string; public_key: string } | undefined): boolean {
  const signature = receipt.signature as { public_key?: unknown } | undefined;
  return ci !== undefined && signature?.public_key === ci.public_key;
}

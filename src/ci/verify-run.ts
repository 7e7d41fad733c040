import path from "node:path";
import { actionTargetGlobs, literalPathScope, pathScope } from "../conformance/action-targets.js";
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
 * read from there); and each changed file inside some admitted action's
 * target or the run's own records, else named as a deviation.
 */
export async function verifyRun(input: {
  runFile: string;
  trust: { config: SuiteConfig; source: string };
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
  const handoffBase = { runFolder: path.dirname(runAbs), suiteRoot: path.resolve(input.suiteRoot ?? input.root) };
  // The admitted event is the run's claim that the gate admitted; CI re-judges it from the facts recorded before it.
  const rejudged = rejudgeAdmissions(file.events, config);
  // Globs come only from admitted actions' targets; the run file and handoff folders are paths, compared literally
  // (an agent names its handoff folder, and a folder called `**` must not mean everything).
  const allowed: string[] = [];
  const literal: string[] = [ownPath(input.root, runAbs)].filter((p): p is string => p !== undefined);
  const targetsOf = new Map<string, readonly string[]>();
  for (const wf of Object.values(file.state.workflows)) {
    for (const [receipt, right] of decisions(file.state, wf)) {
      const v = judgeReceiptTrust(receipt, right, config);
      add("receipt", v.ok, `${wf.planner} rev ${receipt.revision} ${receipt.kind}`, v.ok ? `signed by ${v.signer}` : v.reason);
    }
    const rejudgedProblems = rejudged
      .filter((r) => r.planner === wf.planner)
      .flatMap((r) => r.problems.map((p) => `admission at event ${r.seq}: ${p}`));
    const targets = await checkAdmission(wf, handoffBase, config, rejudgedProblems, add);
    if (wf.admissions.length > 0) checkOutcome(file.state, wf, config, add);
    allowed.push(...(targets ?? []));
    targetsOf.set(wf.planner, targets ?? []);
    // Only an admitted workflow's handoff folder (its hash checked against the admission) is the run's own record.
    const handoffDir = targets && wf.handoff ? ownPath(input.root, resolveHandoffDir(wf.handoff.dir, handoffBase)) : undefined;
    if (handoffDir) literal.push(`${handoffDir}/`);
  }
  if (input.changed) {
    const scope = pathScope(allowed);
    const ownRecords = literalPathScope(literal);
    for (const wf of Object.values(file.state.workflows))
      checkVerifiedChange(wf, input.changed, ownRecords, pathScope(targetsOf.get(wf.planner) ?? []), add);
    for (const f of input.changed) {
      const inside = scope.includes(f.path) || ownRecords.includes(f.path);
      // A submodule pointer is a commit id: what it points to is nothing this check reads, so it never passes as a file.
      const pointer = f.mode === GITLINK;
      add(
        "changed-file",
        inside && !pointer,
        f.path,
        pointer
          ? "deviation: a submodule pointer, not a file; what its commit holds is not judged against the plan"
          : inside
            ? "inside the plan"
            : "deviation: outside every admitted action's target and the run's own records",
      );
    }
  }
  return { ok: findings.every((f) => f.ok), run_id: file.state.run_id, trust_source: input.trust.source, findings };
}

/**
 * What happened after the admission: an admitted pair passes only while it
 * executes with no stop open on it or the run (a stop counts as lifted only by
 * a resolution a trusted reviewer signed with the stop right), or once closed
 * verified. A failed, rolled back or abandoned close, or a stop, fails it.
 */
function checkOutcome(
  state: RunState,
  wf: Workflow,
  config: SuiteConfig,
  add: (check: VerifyCheck, ok: boolean, subject: string, message: string) => void,
): void {
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
  add: (check: VerifyCheck, ok: boolean, subject: string, message: string) => void,
): void {
  const recorded = wf.result?.outcome === "verified" ? wf.result.execution?.changed_files : undefined;
  if (recorded === undefined) return;
  const closed = new Map(recorded.filter((f) => !ownRecords.includes(f.path)).map((f) => [f.path, f]));
  // Another pair's files are that pair's to have verified (a run of several pairs closes each on its own files); a
  // file inside no admitted target is a deviation the changed-file check names.
  const now = new Map(
    changed.filter((f) => !ownRecords.includes(f.path) && (closed.has(f.path) || ownTargets.includes(f.path))).map((f) => [f.path, f]),
  );
  // The digest, and what the path is when it is not a plain file (an executable, a symlink, a submodule pointer).
  const short = (f: ChangedFile) =>
    f.sha256 === null ? "deleted" : `${f.sha256.slice(0, 19)}…${f.mode === undefined || f.mode === "100644" ? "" : ` ${kindOf(f)}`}`;
  const differ = [
    ...[...now].flatMap(([p, f]) => {
      const then = closed.get(p);
      if (!then) return [`${p} (not in the verified change)`];
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
      : `the change under test is not the one closed verified: ${shown.join("; ")}; close it again on this head, or push only what was verified`,
  );
}

/** A workflow's decisions that a person signs, each with the right it needs. */
function decisions(state: RunState, wf: Workflow): Array<[{ kind: string; revision?: number } & Record<string, unknown>, Right]> {
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
 * checkout re-hashed and read for the action targets. Undefined when the
 * workflow never executed, or its plan cannot be read (then every changed
 * file outside the run's own records is a deviation).
 */
async function checkAdmission(
  wf: Workflow,
  handoffBase: { runFolder: string; suiteRoot: string },
  config: SuiteConfig,
  rejudged: readonly string[],
  add: (check: VerifyCheck, ok: boolean, subject: string, message: string) => void,
): Promise<string[] | undefined> {
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
  add(
    "handoff",
    unread.length === 0,
    subject,
    unread.length === 0
      ? `the approved bytes are in the checkout; ${actions.length} of the plan's ${model.actions.length} actions admitted (${actions.map((a) => a.id).join(", ") || "none"}), targets ${targets.join(", ") || "(none)"}`
      : `the approved plan does not read: ${unread[0]?.message}`,
  );
  return targets;
}

/** A path as a POSIX path relative to the checkout root, or undefined when it lies outside it. */
function ownPath(root: string, abs: string): string | undefined {
  const rel = path.relative(path.resolve(root), abs);
  return rel === "" || rel.startsWith("..") || path.isAbsolute(rel) ? undefined : rel.split(path.sep).join("/");
}

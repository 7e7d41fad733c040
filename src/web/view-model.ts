import type { PresentedFile } from "../gate/present-plan.js";
import type { RecordChange } from "../handoff/diff-records.js";
import type { HandoffModel, RecordKind } from "../handoff/handoff-model.js";
import type { NextStepData } from "../run/next-step.js";
import type { Settings } from "../run/run-schema.js";
import type { State } from "../run/transition-table.js";
import type { Mode } from "../suite/prompt.js";
import type { RenderedAgentDocuments } from "./render-agent-documents.js";

/**
 * The data each review page is rendered from (SPEC §10). Plain data the
 * server gathers with the library; the render functions do no I/O and
 * decide nothing the server has not decided (which forms the state allows,
 * whether a receipt verified). Every string is shown escaped, agent text
 * with its invisible characters written out; every URL is a path on this
 * server (anything else is rendered as `#`).
 */

/** What every page's frame needs. */
export interface LayoutView {
  /** The signed-in reviewer's name, or null when nobody is signed in (the header then links to `/signin`). */
  reviewer: string | null;
  /** This session's CSRF token: put in `<meta name="csrf-token">` for the client script and in every form. */
  csrf: string;
  /** True when the server listens with `--insecure-http` on an address that is not loopback: every page shows a warning banner. */
  insecureHttp: boolean;
}

/** One planner → executor pair of a run, as a list shows it. */
export interface PairSummaryView {
  /** The planner prompt's ID (the workflow's key). */
  planner: string;
  /** The executor prompt's ID, its exact twin. */
  executor: string;
  /** The executor prompt's title, as the suite states it. */
  executorTitle: string;
  /** The workflow's state (SPEC §5). */
  state: State;
  /** The current revision (0 before the first freeze). */
  revision: number;
}

/** One run in the run list. */
export interface RunSummaryView {
  /** The run's ID (`run_` and 16 hex digits). */
  runId: string;
  /** The pinned suite's `suite_id`. */
  suiteId: string;
  /** The run's pairs with their states. */
  pairs: PairSummaryView[];
  /** When the run last changed (ISO 8601, the time of its last event). */
  updatedAt: string;
  /** The run page's path, `/runs/{runId}`. */
  url: string;
}

/** What the run list is filtered by (`?state=&suite=`): null for any. */
export interface RunListFilters {
  /** Runs with at least one pair in this state. */
  state: State | null;
  /** Runs of this suite (its `suite_id`). */
  suite: string | null;
}

/** The run list, `/`. */
export interface RunListView {
  layout: LayoutView;
  /** The filters applied to `runs` (absent: none). */
  filters?: RunListFilters;
  /** Every suite ID among all the runs, filtered or not, for the suite filter's choices (absent: those of `runs`). */
  suites?: string[];
  /** How many runs there are before filtering (absent: as many as `runs`). */
  total?: number;
  /** Every run, in the order to show (the server sorts, newest first); those waiting on this reviewer are listed first. */
  runs: RunSummaryView[];
  /** The signed-in reviewer's rights (`review`, `consent`, `apply`, `stop`): which waiting pairs wait on them. */
  rights?: readonly string[];
  /** Now (ISO 8601), for "5 minutes ago"; absent: times are shown as they are. */
  now?: string;
}

/** A pair on the run page: its state, its next step and where its current revision is shown. */
export interface RunPairView extends PairSummaryView {
  /** The one legal next step, as data (rendered as a sentence, never as a command line). */
  next: NextStepData;
  /** The current frozen hash, or null before the first freeze. */
  hash: string | null;
  /** The current revision page's path, or null before the first freeze. */
  revisionUrl: string | null;
}

/** A hard stop (`!STOP:{reason}`) on the run or one workflow, raised or lifted. */
export interface StopView {
  /** The stop's number (its `stop_raised` event's): what its lift names. */
  seq: number;
  /** The stop's slug (`[a-z0-9][a-z0-9-]*`). */
  reason: string;
  /** The planner whose workflow it stops, or null for the whole run. */
  workflow: string | null;
  /** Who raised it. */
  raisedBy: string;
  /** When it was raised (ISO 8601). */
  raisedAt: string;
  /** The note given when it was raised, or null. */
  note: string | null;
  /** Who lifted it, when and why; null while it stands. */
  lifted: { by: string; at: string; resolution: string } | null;
  /** The lift-stop form's action, when the stop stands and the reviewer may lift it; else null. */
  liftAction: string | null;
}

/** The run page, `/runs/{runId}`. */
export interface RunPageView {
  layout: LayoutView;
  /** The run's ID. */
  runId: string;
  /** The pinned suite's `suite_id`. */
  suiteId: string;
  /** What the run was created for: mode, environment, action scope, budget. */
  settings: Settings;
  /** The run's pairs. */
  pairs: RunPairView[];
  /** Every stop raised on the run, standing or lifted. */
  stops: StopView[];
  /** The raise-a-stop form's action, or null when the reviewer may not raise one. */
  stopAction: string | null;
}

/** How a receipt is signed: an Ed25519 key file, a reviewer's passkey, or not at all. */
export type SignatureKind = "ed25519" | "webauthn" | "unsigned";

/** One receipt on the timeline of a workflow. */
export interface ReceiptView {
  /** The receipt kind as the library names it (`freeze`, `review`, `consent`, `apply_approval`, `admission`, `stop_resolution`, `dry_run_result`, `verification`), or `agent_report`: the agent's report of how its work ended, not a receipt. */
  kind: string;
  /** Who decided or acted (reviewer, user, approver, actor). */
  who: string;
  /** The decision or result (`approved`, `changes_requested`, `passed`…), or null for a receipt without one (a freeze). */
  decision: string | null;
  /** Feedback, a reason or a note recorded with it, or null. */
  note: string | null;
  /** The revision it is for, or null. */
  revision: number | null;
  /** The handoff hash it binds, or null. */
  hash: string | null;
  /** When (ISO 8601). */
  at: string;
  /** How it is signed. */
  signature: SignatureKind;
  /** True for a record the gate itself writes (an admission), not a person's decision: shown as "recorded by the gate". */
  byGate?: boolean;
  /** The server's verification of the signature against the enrolled key: ok, and why not (or what it verified against); null when unsigned. */
  verified: { ok: boolean; reason: string } | null;
}

/** A link to one revision of the workflow. */
export interface RevisionLinkView {
  /** The revision number. */
  revision: number;
  /** Its frozen hash. */
  hash: string;
  /** When it was frozen (ISO 8601). */
  frozenAt: string;
  /** The revision page's path. */
  url: string;
}

/** The exact executor the plan is for, from the pinned suite. */
export interface ExecutorView {
  /** The executor prompt's ID. */
  id: string;
  /** Its title. */
  title: string;
  /** sha256 of its whole file, frontmatter and body (`sha256:<hex>`). */
  digest: string;
  /** Its Markdown body, rendered with raw HTML off. */
  body: string;
  /** The whole file as the executor receives it (frontmatter and body), shown verbatim: rendering can hide text. */
  source: string;
}

/** The consent form: the question as the library words it, and the limits to consent to. */
export interface ConsentFormView {
  /** The form's action. */
  action: string;
  /** The consent question, naming the executor's ID and title exactly (from the library's `consentQuestion`). */
  question: string;
  /** The question in one short line (the library's `consentQuestionLine`): the legend of the answer, the whole question one click away. */
  summary: string;
  /** The run's settings, shown as the defaults of the consent's limits. */
  settings: Settings;
  /** The modes the reviewer may choose from. */
  modes: Mode[];
  /** The plan's action IDs, offered as the scope's checkboxes besides "all". */
  actionIds: string[];
}

/** The decision forms the workflow's state allows on this revision; a missing form is not shown. */
export interface RevisionFormsView {
  /** Request changes (feedback required): the form's action. */
  requestChanges?: string;
  /** Approve the plan: the form's action. */
  approve?: string;
  /** Decline the plan (a reason required): the form's action. */
  decline?: string;
  /** Answer the consent question. */
  consent?: ConsentFormView;
  /** Close the executing pair as verified (the `verify` right): the form's action and the plan's acceptance criterion IDs, each asked for its result. */
  verifiedClose?: { action: string; criteria: string[] };
}

/** The revision page, `/runs/{runId}/pairs/{planner}/revisions/{n}`, rendered from the frozen bytes. */
export interface RevisionPageView {
  layout: LayoutView;
  /** The run's ID. */
  runId: string;
  /** The run page's path. */
  runUrl: string;
  /** The planner prompt's ID. */
  planner: string;
  /** This revision's number. */
  revision: number;
  /** The workflow's latest revision (`revision n of m`). */
  latestRevision: number;
  /** This revision's full frozen hash: every form carries it as `handoff_hash`. */
  hash: string;
  /** The workflow's state now. */
  state: State;
  /** When it was frozen (ISO 8601). */
  frozenAt: string;
  /** Who froze it. */
  frozenBy: string;
  /** The planner's reason when it re-froze without changes, or null. */
  unchangedBecause: string | null;
  /** The change the run is bound to (`OWNER/REPO#PR`, `OWNER/REPO@BRANCH`), whose check and CI judge it; absent: none. */
  change?: string;
  /**
   * The earlier revision this one is compared with: the last one the signed-in reviewer decided on (`yours`, their
   * decision), or the previous one (`yours` null); null for revision 1; absent: the previous one.
   */
  comparedWith?: { revision: number; yours: "changes_requested" | "approved" | "declined" | null } | null;
  /** The review that asked for changes on the revision compared with (see `comparedWith`), or null. */
  requestedBy: { reviewer: string; feedback: string } | null;
  /** The comments of that request, each with whether the item it names changed in this revision; absent or empty: none. */
  previousComments?: Array<{ item: string; kind: string; text: string; change: "changed" | "unchanged" | "removed" }>;
  /** The comments of a request for changes on this revision (what the planner is asked to change); absent or empty: none. */
  requestedComments?: Array<{ item: string; kind: string; text: string }>;
  /** Record changes since the revision compared with, by ID; null for revision 1. */
  changes: RecordChange[] | null;
  /** The records of this revision, in the pinned suite's format: all of them, or the first of each kind (see `recordsNotShown`). */
  model: HandoffModel;
  /** When not every record is shown whole: the sentence saying what is not and where all of it is, each kind's count, and the records cut (by marker). */
  recordsNotShown?: { notice: string; totals: Record<RecordKind, number>; cut: string[] } | null;
  /** How many record changes there are in all, when `changes` shows only the first of them. */
  changesTotal?: number;
  /** Every hashed file, with its text (or lossy view) and its diff against revision n-1. */
  files: PresentedFile[];
  /** Files present in revision n-1 and gone in this one. */
  removedFiles: string[];
  /** When not every file is listed: how many there are, and the sentence saying what is listed. */
  filesNotListed?: { total: number; notice: string } | null;
  /** The handoff's `report.md` as Markdown, or null when there is none. */
  report: string | null;
  /**
   * The executor's body and the report rendered (renderAgentDocuments): a server renders them off its thread,
   * cached by hash (renderAgentDocumentsOffThread); absent, the page renders them on the calling thread.
   */
  rendered?: RenderedAgentDocuments;
  /** The exact executor. */
  executor: ExecutorView;
  /** Every receipt of the workflow, oldest first. */
  receipts: ReceiptView[];
  /** The hard stops on the run or on this pair, standing or lifted, each standing one with its own lift form; absent or empty: none shown. */
  hardStops?: StopView[];
  /** Every revision of the workflow, this one included. */
  revisions: RevisionLinkView[];
  /** The forms the state allows (none are shown when `stale` is set). */
  forms: RevisionFormsView;
  /** Set when this revision is no longer the current one (the server refused a stale hash): the current revision's number and path. */
  stale: { revision: number; url: string } | null;
  /** The plan beside what was done, when `close` recorded the executed change of this revision; null otherwise. */
  execution: ExecutionView | null;
  /** The receipt the signed-in reviewer has just recorded on this revision, shown as a confirmation at the top; absent or null: none. */
  confirmation?: ReceiptView | null;
}

/** The plan versus what the executor did, as `close` recorded it (issue 13); deviations flagged by the gate, not by the page. */
export interface ExecutionView {
  /** How the workflow was closed (`verified`, `failed`, `rolled_back`). */
  outcome: string;
  /** When and by whom it was closed (ISO 8601; a name). */
  closedAt: string;
  closedBy: string;
  /** Each action of the plan, in plan order, and whether it was done. */
  actions: Array<{ id: string; target: string | null; done: boolean }>;
  /** Each changed file with its digest (null: deleted), and whether it lies outside every action's target. */
  changedFiles: Array<{ path: string; sha256: string | null; outsidePlan: boolean }>;
  /** Each criterion of the plan with its recorded results; none recorded: no evidence. */
  criteria: Array<{ id: string; results: Array<{ result: "passed" | "failed"; command: string }> }>;
}

/** The enrolment page, `/enrol/{token}`. */
export interface EnrolPageView {
  layout: LayoutView;
  /** The reviewer being enrolled. */
  name: string;
  /** The rights the passkey will carry (`review`, `consent`, `apply`, `stop`). */
  rights: string[];
  /** When the enrolment link expires (ISO 8601). */
  expiresAt: string;
  /** The enrolment token, as in the path (the client script posts to `/enrol/{token}/options` and `/enrol/{token}`). */
  token: string;
}

/** The sign-in page. */
export interface SignInPageView {
  layout: LayoutView;
  /** Where to go after signing in (a path on this server), or null for `/`. */
  next: string | null;
}

/** An error or a refusal: a page, or a fragment swapped in by htmx. */
export interface ErrorView {
  /** A short title ("Stale revision", "Not allowed"). */
  title: string;
  /** One line saying what failed. */
  message: string;
  /** What the person can do about it. */
  remedy: string;
  /** A link to follow, or null. */
  link: { url: string; label: string } | null;
}

/** The error page: an error with the frame. */
export interface ErrorPageView extends ErrorView {
  layout: LayoutView;
  /** The HTTP status the server answers with (shown in the title). */
  status: number;
}

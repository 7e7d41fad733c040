import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readRunFile } from "../store/run-file.js";
import type { Mode } from "../suite/prompt.js";
import { runCli, STACK_FRAME } from "../test-support/run-cli.js";
import {
  cloneGateRun,
  driveTo,
  EXECUTOR,
  editHandoff,
  type GateRun,
  makeGateRun,
  PLANNER,
  removeGateRuns,
  runBytes,
  snapshotTree,
} from "../test-support/run-fixture.js";
import { ADMISSION_STOP } from "./admission-checks.js";
import { NEXT_STEP } from "./next-step.js";
import { findTransition, STATES, type State, TRANSITIONS, type Transition, type TransitionEvent } from "./transition-table.js";

/** A workflow resting in a state, reached by driving the real gate functions. */
interface Scenario {
  name: string;
  state: State;
  mode: Mode;
}

const SCENARIOS: Scenario[] = [
  { name: "investigating", state: "investigating", mode: "APPLY_SAFE" },
  { name: "handoff_frozen", state: "handoff_frozen", mode: "APPLY_SAFE" },
  { name: "plan_review_pending", state: "plan_review_pending", mode: "APPLY_SAFE" },
  { name: "plan_revision_pending", state: "plan_revision_pending", mode: "APPLY_SAFE" },
  { name: "execution_consent_pending", state: "execution_consent_pending", mode: "APPLY_SAFE" },
  { name: "execution_consent_pending of an APPLY_APPROVED run", state: "execution_consent_pending", mode: "APPLY_APPROVED" },
  { name: "approval_pending", state: "approval_pending", mode: "APPLY_APPROVED" },
  { name: "dry_run_ready", state: "dry_run_ready", mode: "APPLY_SAFE" },
  { name: "dry_run_ready of an APPLY_APPROVED run", state: "dry_run_ready", mode: "APPLY_APPROVED" },
  { name: "executing", state: "executing", mode: "APPLY_SAFE" },
  { name: "closed", state: "closed", mode: "APPLY_SAFE" },
  { name: "failed", state: "failed", mode: "APPLY_SAFE" },
];

const COMMAND_NAMES = [
  "freeze",
  "review changes_requested",
  "review approved",
  "review declined",
  "consent approve",
  "consent decline",
  "approve-apply",
  "admit",
  "close",
  "stop",
] as const;
type CommandName = (typeof COMMAND_NAMES)[number];

/**
 * SPEC §5, written out by hand: for each scenario, the commands that are
 * legal and the state each leaves the workflow in. Everything not listed is
 * refused. `stop` is legal everywhere and moves nothing.
 */
const EXPECTED: Record<string, Partial<Record<CommandName, State>>> = {
  investigating: { freeze: "plan_review_pending", close: "closed" },
  handoff_frozen: { close: "closed" },
  plan_review_pending: {
    freeze: "plan_review_pending",
    "review changes_requested": "plan_revision_pending",
    "review approved": "execution_consent_pending",
    "review declined": "closed",
    close: "closed",
  },
  plan_revision_pending: { freeze: "plan_review_pending", close: "closed" },
  execution_consent_pending: {
    freeze: "plan_review_pending",
    "consent approve": "dry_run_ready",
    "consent decline": "closed",
    close: "closed",
  },
  "execution_consent_pending of an APPLY_APPROVED run": {
    freeze: "plan_review_pending",
    "consent approve": "approval_pending",
    "consent decline": "closed",
    close: "closed",
  },
  approval_pending: { freeze: "plan_review_pending", "approve-apply": "dry_run_ready", close: "closed" },
  dry_run_ready: { freeze: "plan_review_pending", admit: "executing", close: "closed" },
  "dry_run_ready of an APPLY_APPROVED run": { freeze: "plan_review_pending", admit: "executing", close: "closed" },
  executing: { close: "closed" },
  closed: {},
  failed: {},
};

/**
 * Rows the table allows that the gate opens only after the current consent
 * expired unused (renew or withdraw it); with a fresh consent the CLI still
 * refuses them, as EXPECTED says.
 */
const EXPIRY_GATED: Record<string, Partial<Record<CommandName, State>>> = {
  approval_pending: { "consent approve": "approval_pending", "consent decline": "closed" },
  dry_run_ready: { "consent approve": "dry_run_ready", "consent decline": "closed" },
  "dry_run_ready of an APPLY_APPROVED run": { "consent approve": "approval_pending", "consent decline": "closed" },
};

/** The events each command records when it is legal. */
const EVENTS: Record<CommandName, TransitionEvent[]> = {
  freeze: ["handoff_frozen", "review_requested"],
  "review changes_requested": ["changes_requested"],
  "review approved": ["plan_approved"],
  "review declined": ["plan_declined"],
  "consent approve": ["consent_granted"],
  "consent decline": ["consent_declined"],
  "approve-apply": ["apply_approved"],
  admit: ["admitted"],
  close: ["closed"],
  stop: [],
};

const ANY_HASH = `sha256:${"ab".repeat(32)}`;

function argvFor(command: CommandName, g: GateRun, scenario: Scenario, hash: string): string[] {
  const run = g.runFile;
  switch (command) {
    case "freeze":
      return ["freeze-pair-handoff", run, PLANNER, "--handoff", g.handoff, "--actor", "planner-agent"];
    case "review changes_requested":
      return [
        "review-pair-plan",
        run,
        PLANNER,
        "--decision",
        "changes_requested",
        "--feedback",
        "Add rollback evidence",
        "--handoff-hash",
        hash,
        "--reviewer",
        "alice",
      ];
    case "review approved":
      return ["review-pair-plan", run, PLANNER, "--decision", "approved", "--handoff-hash", hash, "--reviewer", "alice"];
    case "review declined":
      return [
        "review-pair-plan",
        run,
        PLANNER,
        "--decision",
        "declined",
        "--feedback",
        "not now",
        "--handoff-hash",
        hash,
        "--reviewer",
        "alice",
      ];
    case "consent approve":
      return ["consent-pair-execution", run, PLANNER, "--approve", "--handoff-hash", hash, "--user", "alice"];
    case "consent decline":
      return ["consent-pair-execution", run, PLANNER, "--decline", "--handoff-hash", hash, "--user", "alice"];
    case "approve-apply":
      return ["approve-apply", run, PLANNER, "--approver", "bob"];
    case "admit":
      return ["admit", run, EXECUTOR, "--actor", "executor-agent"];
    case "close":
      return scenario.state === "executing"
        ? ["close", run, PLANNER, "--result", "rolled_back", "--actor", "executor-agent"]
        : ["close", run, PLANNER, "--result", "abandoned", "--residual", "left undone on purpose", "--actor", "alice"];
    case "stop":
      return ["stop", run, "--reason", "table-check", "--workflow", PLANNER, "--actor", "alice"];
  }
}

const templates = new Map<string, GateRun>();

beforeAll(async () => {
  for (const sc of SCENARIOS) {
    const g = makeGateRun();
    await driveTo(g, sc.state, { mode: sc.mode });
    templates.set(sc.name, g);
  }
});

afterAll(removeGateRuns);

describe("the hand-written expectations", () => {
  it("cover every state of the runtime's table", () => {
    expect(new Set(SCENARIOS.map((s) => s.state))).toEqual(new Set(STATES));
  });

  it("agree with the runtime's TRANSITIONS rows for every state × command", () => {
    for (const sc of SCENARIOS) {
      for (const command of COMMAND_NAMES) {
        const expected = EXPECTED[sc.name]?.[command];
        const events = EVENTS[command];
        if (events.length === 0) continue;
        const path = command === "consent approve" ? (sc.mode === "APPLY_APPROVED" ? "apply_approved_path" : "dry_run_path") : undefined;
        let state: State = sc.state;
        let legal = true;
        for (const event of events) {
          const row: Transition | undefined = findTransition(state, event, path);
          if (!row) {
            legal = false;
            break;
          }
          state = row.to;
        }
        expect({ scenario: sc.name, command, to: legal ? state : "refused" }).toEqual({
          scenario: sc.name,
          command,
          to: EXPIRY_GATED[sc.name]?.[command] ?? expected ?? "refused",
        });
      }
    }
  });

  it("make closed and failed final: no row leaves them", () => {
    expect(TRANSITIONS.filter((t) => t.from === "closed" || t.from === "failed")).toEqual([]);
  });
});

for (const sc of SCENARIOS) {
  describe(`a workflow in ${sc.name}`, () => {
    it(`rests in ${sc.state} after driving the gate functions there`, () => {
      const g = templates.get(sc.name) as GateRun;
      expect(readRunFile(g.runFile).state.workflows[PLANNER]?.state).toBe(sc.state);
    });

    for (const command of COMMAND_NAMES) {
      const to = command === "stop" ? sc.state : EXPECTED[sc.name]?.[command];
      const title =
        command === "stop"
          ? `accepts stop and stays in ${sc.state}`
          : to !== undefined
            ? `accepts ${command} and moves to ${to}`
            : command === "admit"
              ? "stops admit with exit 3 naming the state and the legal next step, and changes nothing"
              : `refuses ${command} with exit 1 naming ${sc.state} and the legal next step, and changes nothing`;
      it(title, async () => {
        const g = cloneGateRun(templates.get(sc.name) as GateRun);
        const before = readRunFile(g.runFile);
        const wf = before.state.workflows[PLANNER];
        if (command === "freeze") editHandoff(g, `material edit for ${command}`);
        const bytes = runBytes(g);
        const tree = snapshotTree(g.dir);
        const r = await runCli([...argvFor(command, g, sc, wf?.handoff?.hash ?? ANY_HASH), "--home", g.home, "--json"]);
        expect(r.output).not.toMatch(STACK_FRAME);

        if (to !== undefined) {
          expect({ code: r.code, out: r.output }).toMatchObject({ code: 0 });
          const after = readRunFile(g.runFile);
          expect(after.state.workflows[PLANNER]?.state).toBe(to);
          const added = after.file.events.slice(before.file.events.length).map((e) => e.type);
          expect(added).toEqual(command === "stop" ? ["stop_raised"] : EVENTS[command]);
          return;
        }

        const json = JSON.parse(r.stdout);
        if (command === "admit") {
          expect(r.code).toBe(3);
          expect(json.stop).toBe(ADMISSION_STOP);
          const stateCheck = json.checks.find((c: { id: string }) => c.id === "state");
          expect(stateCheck.ok).toBe(false);
          expect(stateCheck.detail).toContain(`state ${sc.state}`);
          expect(stateCheck.detail).toContain(nextStepWords(sc.state));
        } else {
          expect(r.code).toBe(1);
          expect(json.error.kind).toBe("refused");
          expect(json.error.message).toContain(`${PLANNER} is in state ${sc.state}`);
          expect(json.error.message).toContain(nextStepWords(sc.state));
          expect(json.error.details).toMatchObject({
            code: "TRANSITION_REFUSED",
            state: sc.state,
            next_action: NEXT_STEP[sc.state].action,
            next_step: { operation: NEXT_STEP[sc.state].operation },
          });
          expect(json.error.message.split("\n")).toHaveLength(1);
        }
        expect(runBytes(g).equals(bytes)).toBe(true);
        expect(snapshotTree(g.dir)).toEqual(tree);
      });
    }
  });
}

/** How a refusal from `state` words the legal next step. */
function nextStepWords(state: State): string {
  const action = NEXT_STEP[state].action;
  return action.startsWith("none: ") ? `there is no legal next step: ${action.slice(6)}` : `the legal next step is to ${action}`;
}

describe("a refusal printed for a person", () => {
  it("is one line on stderr naming the state and the exact next command with the run file filled in", async () => {
    const g = cloneGateRun(templates.get("plan_review_pending") as GateRun);
    const r = await runCli([
      "consent-pair-execution",
      g.runFile,
      "--home",
      g.home,
      PLANNER,
      "--approve",
      "--handoff-hash",
      ANY_HASH,
      "--user",
      "alice",
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(r.stderr).toContain("MD-29 is in state plan_review_pending; the legal next step is to review the frozen plan");
    expect(r.stderr).toContain(
      `twinlock review-pair-plan ${g.runFile} MD-29 --decision changes_requested|approved|declined --handoff-hash sha256:`,
    );
  });

  it("from a final state says there is no legal next step instead of 'to none'", async () => {
    const g = cloneGateRun(templates.get("closed") as GateRun);
    const r = await runCli(["close", g.runFile, "--home", g.home, PLANNER, "--result", "abandoned", "--residual", "again"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("MD-29 is in state closed; there is no legal next step: the workflow is closed");
    expect(r.stderr).not.toContain("to none");
  });
});

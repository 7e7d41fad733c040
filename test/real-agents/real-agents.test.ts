import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeGateRuns } from "../../src/test-support/run-fixture.js";
import { ensureBuilt, REPO_ROOT } from "../support/ensure-built.js";
import { AGENT_CLIS, AGENT_CLIS_DIR, missingCli, PINNED, REAL_AGENTS, type RealAgent } from "./agent-clis.js";
import { hooksStatusAfterInstall } from "./hooks-status-run.js";
import { type AgentRun, describeRun, type HookState, runAgent } from "./run-agent.js";
import { observe, recordHooksStatus, recordScenario, writeScenarioTable } from "./scenario-table.js";
import {
  ACTION_KINDS,
  type ActionKind,
  CRAFTED_SPACES,
  doneContent,
  EDIT_BEFORE,
  FINAL_TEXT,
  OUTWARD_TOOLS,
  type OutwardTool,
  READS,
} from "./scripted-action.js";

/**
 * The real agent CLIs (Claude Code, Codex CLI, Gemini CLI, pinned in
 * scripts/install-agent-clis.sh), driven headless against a scripted model
 * server on 127.0.0.1 in a temporary project with the twinlock hook
 * installed as `twinlock hooks install --agent X --project` writes it.
 * Opt-in: TWINLOCK_REAL_AGENTS=1, after scripts/install-agent-clis.sh.
 * Each run takes seconds (a timed-out hook: the installed 10 s more), one
 * CLI at a time.
 *
 * Under `twinlock exec` (an admitted run of the demo pair is the project:
 * admitted-run.ts), a write, an edit and a shell call on an admitted target
 * are done and outside the targets are not, also with the hook failing:
 * the three tools run in exec's bubblewrap sandbox, which holds where a
 * failing hook lets the call through (Codex, Gemini) and where the hook
 * lets a shell command through without seeing what it writes (all three).
 *
 * Under `twinlock plan` (the demo pair investigating is the project:
 * admitted-run.ts), the planner's write and edit inside its handoff folder
 * are done, and a write, an edit or a writing shell call on an action
 * target are not: the three run in plan's sandbox, where only the
 * handoff folder is writable. Claude Code and Gemini CLI freeze the handoff
 * through twinlock's stdio MCP server: started inside the sandbox, it finds
 * the session's relay and talks to plan's own server outside, which writes
 * the gate home; Codex's freeze is not driven (it offers MCP tools only
 * through its tool_search).
 *
 * Where a tool is known to let the call through today (issue 24), the test
 * is written as the behaviour wanted and marked `it.fails`, its name saying
 * so and why: it goes red the day the tool holds, to be made a plain `it`.
 *
 * Every scenario records what its run did (scenario-table.ts, from the run's
 * file, tool results and notes), and `hooks status` after `hooks install`
 * for each tool: at the end the suite writes them as one table,
 * test-results/agent-scenarios.md (tool × scenario, expected, observed).
 */
const ENABLED = process.env.TWINLOCK_REAL_AGENTS === "1";

const NAMES: Record<RealAgent, string> = {
  claude: `Claude Code ${PINNED.claude}`,
  codex: `Codex CLI ${PINNED.codex}`,
  gemini: `Gemini CLI ${PINNED.gemini}`,
};

/** The ways a hook can fail that a tool may treat as open, and what each stands for. */
const FAILURES: { hook: HookState; how: string }[] = [
  { hook: "not-found", how: "the node binary the installed command names is gone (exit 127)" },
  { hook: "killed", how: "the hook dies by SIGKILL" },
  { hook: "timed-out", how: "the hook answers nothing past the installed timeout" },
];

/**
 * Scenarios where the real tool lets the call through today, with the
 * finding of issue 24 that says so. Measured on the pinned versions; a
 * scenario not listed holds today. What is left is the tools' own
 * behaviour, which no hook can change: there the second layer (`exec` with
 * the tool's sandbox, or the OS-user deployment) must hold.
 */
type Scenario =
  | HookState
  | "untrusted"
  | "crafted-patch"
  | "ci-env"
  | `exec-outside-${ActionKind}`
  | `exec-target-${ActionKind}`
  | `plan-target-${ActionKind}`
  | `outward-${OutwardTool}`;
const SECOND_LAYER = "no hook can answer then, so the hook alone cannot hold: exec's sandbox is the answer, and holds under exec (below)";
const OPEN_TODAY: Partial<Record<RealAgent, Partial<Record<Scenario, string>>>> = {
  claude: {
    "exec-outside-shell":
      "the file is new and beside a file target: exec's sandbox mounts a file target's folder writable for Claude Code (its Write and Edit rename a temporary file over the target), its other entries read-only, so a new name there can be made; exec names it after the command (below)",
  },
  codex: {
    untrusted: "Codex skips a hook the user has not trusted in /hooks or with `hooks install --trust`, silently (finding 1)",
    "not-found": `Codex runs the call when the hook exits 127 (finding 2; ${SECOND_LAYER})`,
    killed: `Codex runs the call when the hook dies by a signal (finding 2; ${SECOND_LAYER})`,
    "timed-out": `Codex runs the call when the hook times out (finding 2; ${SECOND_LAYER})`,
  },
  gemini: {
    killed: `Gemini reads a signal death as exit 0 with no output and allows (finding 2; ${SECOND_LAYER})`,
    "timed-out": `Gemini allows the call when the hook times out (finding 2; ${SECOND_LAYER})`,
  },
};

/**
 * The tools exec and plan run in their sandbox without being asked: Codex and Gemini let a call through when the
 * hook fails; Claude Code's shell commands pass the hook, which cannot see what they write.
 */
const SANDBOXED = new Set<RealAgent>(["claude", "codex", "gemini"]);

/** How a run trusts Codex's hook when what is measured is not finding 1: as `hooks install --trust` writes it. */
function codexTrust(agent: RealAgent) {
  return agent === "codex" ? ("twinlock" as const) : ("none" as const);
}

/** `it`, or `it.fails` with the reason in the name when the tool lets this through today. */
function held(agent: RealAgent, scenario: Scenario, name: string, body: () => Promise<void>, timeout: number) {
  const open = OPEN_TODAY[agent]?.[scenario];
  if (open) it.fails(`${name} — it.fails today: ${open}`, body, timeout);
  else it(name, body, timeout);
}

/** A scenario's row: the tool, what the scenario is, what the suite expects, and the key it is known open by, if any. */
interface Row {
  agent: RealAgent;
  scenario: string;
  expected: string;
  key?: Scenario;
}

/**
 * Runs the CLI with `start`, then `assertions` on the run, and records the scenario's row, observed from the run,
 * whether they held or not (a run that could not be made is recorded as that). Throws what the assertions threw.
 */
async function judged(row: Row, start: () => Promise<AgentRun>, assertions: (run: AgentRun) => void): Promise<void> {
  const base = { tool: NAMES[row.agent], scenario: row.scenario, expected: row.expected };
  const openToday = row.key ? OPEN_TODAY[row.agent]?.[row.key] : undefined;
  let run: AgentRun;
  try {
    run = await start();
  } catch (error) {
    recordScenario({ ...base, observed: `the run could not be made: ${(error as Error).message.slice(0, 200)}`, holds: false, openToday });
    throw error;
  }
  let holds = false;
  try {
    assertions(run);
    holds = true;
  } finally {
    recordScenario({ ...base, observed: observe(run), holds, openToday });
  }
}

/** The call was not done: the file is as it was before the run. */
function expectNotDone(run: AgentRun, kind: ActionKind) {
  expect(run.fileAfter, describeRun(run)).toBe(run.exec || run.plan ? run.before : kind === "edit" ? EDIT_BEFORE : null);
}

/** Whether the CLI offered `tool` to the model in any request (its tool list names it). */
function offeredTo(run: AgentRun, tool: string): boolean {
  return run.requests.some((r) => JSON.stringify(r.body ?? "").includes(`"name":"${tool}"`));
}

/** What the hook answers a planner's call of `kind` on a file outside its handoff folder. */
const PLANNER_DENY: Record<ActionKind, string> = {
  write: "outside the planner's handoff folder",
  edit: "outside the planner's handoff folder",
  shell: "a planner's commands write nowhere",
};

const RUN_TIMEOUT = 150_000;

describe.skipIf(!ENABLED)("the real agent CLIs under the twinlock hook (TWINLOCK_REAL_AGENTS=1)", () => {
  beforeAll(() => ensureBuilt(), 300_000);
  afterAll(() => {
    removeGateRuns();
    writeScenarioTable(path.join(REPO_ROOT, "test-results", "agent-scenarios.md"), {
      "Claude Code": PINNED.claude,
      "Codex CLI": PINNED.codex,
      "Gemini CLI": PINNED.gemini,
    });
  });

  for (const agent of REAL_AGENTS) {
    const missing = missingCli(agent);
    const tool = NAMES[agent];
    describe.skipIf(missing !== undefined)(missing ? `${tool}: skipped, ${missing}` : tool, () => {
      describe("`hooks status` after `hooks install --agent X --project`", () => {
        const setups = agent === "codex" ? [false, true] : [false];
        for (const trust of setups)
          it(
            `${tool}: \`hooks status\` says the hook is installed${agent === "codex" ? (trust ? ", trusted once `--trust` wrote the entry" : ", NOT trusted, and exits 1, until it is trusted") : ""}`,
            () => {
              const status = hooksStatusAfterInstall(agent, trust);
              recordHooksStatus({
                tool,
                setup: `hooks install --agent ${agent} --project${trust ? " --trust" : ""}, then hooks status --agent ${agent}`,
                ...status,
              });
              // The version is in the text when `X --version` answered within status's own limit (Gemini CLI's is slow under load).
              expect(status.output).toMatch(/project\s+installed/);
              if (agent === "codex" && !trust) {
                expect(status.exitCode, status.output).toBe(1);
                expect(status.output).toMatch(/not (yet )?trust/i);
              }
            },
            RUN_TIMEOUT,
          );
      });

      describe("with the hook uninstalled (proves the harness)", () => {
        for (const kind of ACTION_KINDS)
          it(
            `${tool} does the scripted ${kind} and sends its result back to the model`,
            () =>
              judged(
                { agent, scenario: `hook uninstalled: ${kind} (proves the harness)`, expected: "done" },
                () => runAgent(agent, kind, "uninstalled"),
                (run) => {
                  expect(run.fileAfter, describeRun(run)).toBe(doneContent(run.action));
                  expect(run.toolResults.length, describeRun(run)).toBeGreaterThan(0);
                  expect(run.hookCalls).toEqual([]);
                  expect(run.stdout).toContain(FINAL_TEXT);
                },
              ),
            RUN_TIMEOUT,
          );
      });

      describe("with the hook installed and no session bound", () => {
        for (const kind of ACTION_KINDS) {
          const key = agent === "codex" ? "untrusted" : "installed";
          held(
            agent,
            key,
            `${tool} asks the hook and does not do the ${kind}`,
            () =>
              judged(
                {
                  agent,
                  key,
                  scenario: `no session: ${kind}${agent === "codex" ? " (hook installed, not trusted)" : ""}`,
                  expected: "not done, the hook's deny reason reaches the model",
                },
                () => runAgent(agent, kind, "installed"),
                (run) => {
                  expectNotDone(run, kind);
                  // The hook's own reason reached the model: the tool asked it.
                  expect(run.toolResults.join("\n"), describeRun(run)).toContain("no twinlock session is bound");
                },
              ),
            RUN_TIMEOUT,
          );
        }
        if (agent === "codex")
          for (const kind of ACTION_KINDS)
            it(
              `${tool} with the hook trusted by \`hooks install --trust\` (no --dangerously-bypass-hook-trust) asks it and does not do the ${kind}`,
              () =>
                judged(
                  {
                    agent,
                    scenario: `no session: ${kind} (hook trusted by \`hooks install --trust\`)`,
                    expected: "not done, the hook's deny reason reaches the model",
                  },
                  () => runAgent(agent, kind, "installed", { trust: "twinlock" }),
                  (run) => {
                    expectNotDone(run, kind);
                    expect(run.toolResults.join("\n"), describeRun(run)).toContain("no twinlock session is bound");
                  },
                ),
              RUN_TIMEOUT,
            );
      });

      if (agent !== "codex")
        describe("with a call outward and no session bound (the installed matcher sends every tool to the hook)", () => {
          for (const outward of OUTWARD_TOOLS[agent]) {
            const key: Scenario = `outward-${outward}`;
            held(
              agent,
              key,
              `${tool} asks the hook before ${outward} and does not make it`,
              () =>
                judged(
                  {
                    agent,
                    key,
                    scenario: `matcher: ${outward}${outward === "Agent" ? " (Task)" : ""}, no session`,
                    expected: "the hook is asked and denies it (or the CLI does not offer the tool at all: nothing runs)",
                  },
                  () => runAgent(agent, "outward", "installed", { outward }),
                  (run) => {
                    // Claude Code 2.1.328 on a non-Anthropic base URL offers no WebFetch or WebSearch, Gemini CLI 0.61.0 no
                    // save_memory in this setup: the model cannot call them, so no result of one comes back.
                    if (!offeredTo(run, outward)) expect(run.toolResults, describeRun(run)).toEqual([]);
                    else expect(run.toolResults.join("\n"), describeRun(run)).toContain("no twinlock session is bound");
                  },
                ),
              RUN_TIMEOUT,
            );
          }
        });

      describe("in CI (GITHUB_SHA set), the agent's session variables set", () => {
        held(
          agent,
          "ci-env",
          `${tool} hands the hook TWINLOCK_RUN, TWINLOCK_EXECUTOR and TWINLOCK_SESSION`,
          () =>
            judged(
              {
                agent,
                key: "ci-env",
                scenario: "CI (GITHUB_SHA set): the hook sees the TWINLOCK_* variables (Gemini's environment redaction)",
                expected: "the hook looks up that session (not done: none is bound there)",
              },
              () =>
                runAgent(agent, "write", "installed", {
                  trust: agent === "codex" ? "twinlock" : "none",
                  env: {
                    TWINLOCK_RUN: "/nowhere/run.json",
                    TWINLOCK_EXECUTOR: "MD-1",
                    TWINLOCK_SESSION: "not-a-real-secret",
                    GITHUB_SHA: "0123abcd",
                  },
                }),
              (run) => {
                expectNotDone(run, "write");
                // The hook saw the variables: it looked for that session's binding (and found none), not for unset ones.
                expect(run.toolResults.join("\n"), describeRun(run)).toContain("no session of MD-1 on /nowhere/run.json is bound");
              },
            ),
          RUN_TIMEOUT,
        );
      });

      if (agent === "codex")
        describe("with a crafted patch and no session bound", () => {
          held(
            agent,
            "crafted-patch",
            `${tool} with the hook trusted does not apply a patch adding a file outside the project whose one line is ${CRAFTED_SPACES} spaces`,
            () =>
              judged(
                {
                  agent,
                  key: "crafted-patch",
                  scenario: `crafted patch: adds a file outside the project, one line of ${CRAFTED_SPACES} spaces`,
                  expected: "not done, the hook answers before the tool's timeout",
                },
                () => runAgent(agent, "crafted-patch", "installed", { trust: "twinlock" }),
                (run) => {
                  expect(run.toolResults.join("\n"), describeRun(run)).toContain("no twinlock session is bound");
                  expect(run.fileAfter, describeRun(run)).toBeNull();
                },
              ),
            RUN_TIMEOUT,
          );
        });

      if (agent === "claude")
        describe("with every tool sent to the hook (matcher .*)", () => {
          it(
            `${tool} passes ${READS} Reads through the hook with no session, and what a read costs is logged`,
            async () => {
              const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
              const times: Record<"uninstalled" | "installed", number[]> = { uninstalled: [], installed: [] };
              for (let round = 0; round < 3; round++)
                for (const hook of ["uninstalled", "installed"] as const)
                  await judged(
                    {
                      agent,
                      scenario: `${READS} Reads, hook ${hook} (round ${round + 1} of 3)`,
                      expected: "each Read answered with the file's text, never a twinlock deny",
                    },
                    () => runAgent(agent, "reads", hook),
                    (run) => {
                      // Each Read answered and the model asked again: one request a Read, and the last.
                      expect(run.requests.length, describeRun(run)).toBeGreaterThanOrEqual(READS + 1);
                      expect(run.toolResults.join("\n"), describeRun(run)).toContain(EDIT_BEFORE.trim());
                      expect(run.toolResults.join("\n"), describeRun(run)).not.toContain("twinlock");
                      times[hook].push(run.durationMs);
                    },
                  );
              const [off, on] = [median(times.uninstalled), median(times.installed)];
              // A measurement to read, not to assert: the machine's load decides it.
              console.log(
                `${tool}: ${READS} Reads, median of 3 runs: ${off} ms without the hook, ${on} ms with it: ${Math.round((on - off) / READS)} ms a read`,
              );
            },
            RUN_TIMEOUT * 2,
          );
        });

      describe("with the hook's own judging stalled (TWINLOCK_HOOK_TEST_STALL blocks its worker thread)", () => {
        it(
          `${tool} gets the hook's deadline deny before its own timeout and does not do the write`,
          () =>
            judged(
              {
                agent,
                scenario: "hook's judging stalled (its worker blocked)",
                expected: "not done: the hook's own 5 s deadline denies before the tool's timeout",
              },
              () =>
                runAgent(agent, "write", "installed", {
                  trust: agent === "codex" ? "twinlock" : "none",
                  env: { TWINLOCK_HOOK_TEST_STALL: "1" },
                }),
              (run) => {
                expectNotDone(run, "write");
                expect(run.toolResults.join("\n"), describeRun(run)).toContain("did not decide within 5000 ms");
              },
            ),
          RUN_TIMEOUT,
        );
      });

      describe("under `twinlock exec`, an admitted executor (in exec's sandbox)", () => {
        for (const kind of ACTION_KINDS) {
          const onTarget: Scenario = `exec-target-${kind}`;
          held(
            agent,
            onTarget,
            `${tool} does the ${kind} on an admitted target`,
            () =>
              judged(
                { agent, key: onTarget, scenario: `exec (bound session): ${kind} on an admitted target`, expected: "done, in the sandbox" },
                () => runAgent(agent, kind, "installed", { trust: codexTrust(agent), exec: { on: "target" } }),
                (run) => {
                  expect(run.fileAfter, describeRun(run)).toBe(doneContent(run.action));
                  if (SANDBOXED.has(agent)) expect(run.stderr).toContain("runs in a bubblewrap sandbox");
                },
              ),
            RUN_TIMEOUT,
          );
          const outside: Scenario = `exec-outside-${kind}`;
          held(
            agent,
            outside,
            `${tool} does not do the ${kind} on a file of the project outside the targets`,
            () =>
              judged(
                { agent, key: outside, scenario: `exec (bound session): ${kind} outside the targets`, expected: "not done" },
                () => runAgent(agent, kind, "installed", { trust: codexTrust(agent), exec: { on: "outside" } }),
                (run) => expectNotDone(run, kind),
              ),
            RUN_TIMEOUT,
          );
        }
        if (agent === "claude")
          it(
            `${tool}'s shell can make a new file beside a file target (the one thing its folder's mount adds), and exec names it after the command`,
            () =>
              judged(
                {
                  agent,
                  scenario: "exec: shell makes a new file beside a file target",
                  expected: "done (the folder's mount allows a new name), and exec names it after the command",
                },
                () => runAgent(agent, "shell", "installed", { exec: { on: "outside" } }),
                (run) => {
                  expect(run.fileAfter, describeRun(run)).toBe(doneContent(run.action));
                  expect(run.stderr).toMatch(
                    /claude left a new entry beside the file targets that is no target: .*cart\/extra\.go \(not a target/,
                  );
                },
              ),
            RUN_TIMEOUT,
          );
        for (const { hook, how } of FAILURES)
          it(
            `${tool} does not do the write outside the targets when ${how}${SANDBOXED.has(agent) ? " (the sandbox holds)" : ""}`,
            () =>
              judged(
                { agent, scenario: `exec: write outside the targets, hook ${hook} (${how})`, expected: "not done: the sandbox holds" },
                () => runAgent(agent, "write", hook, { trust: agent === "codex" ? "bypass" : "none", exec: { on: "outside" } }),
                (run) => {
                  expectNotDone(run, "write");
                  // The hook was asked and failed: what held is not its answer.
                  if (hook !== "not-found") expect(run.hookCalls.length, describeRun(run)).toBeGreaterThan(0);
                },
              ),
            RUN_TIMEOUT,
          );
        it(
          `${tool}'s shell does not rewrite the hook's own configuration (${AGENT_CLIS[agent].hookConfig}) in the project`,
          () =>
            judged(
              { agent, scenario: `exec: shell rewrites the project's ${AGENT_CLIS[agent].hookConfig}`, expected: "not done" },
              () => runAgent(agent, "shell", "installed", { trust: codexTrust(agent), exec: { on: "hook-config" } }),
              (run) => {
                expect(run.before, describeRun(run)).toContain("twinlock");
                expectNotDone(run, "shell");
              },
            ),
          RUN_TIMEOUT,
        );
        if (SANDBOXED.has(agent))
          it(
            `${tool} under \`exec --hook-only\` runs without the sandbox and says what that gives up`,
            () =>
              judged(
                {
                  agent,
                  scenario: "exec --hook-only: shell writes outside the targets",
                  expected: "done (the hook lets a shell command through; no sandbox), and exec says what that gives up",
                },
                () =>
                  runAgent(agent, "shell", "installed", {
                    trust: codexTrust(agent),
                    exec: { on: "outside", flags: ["--hook-only"] },
                  }),
                (run) => {
                  expect(run.stderr).toContain(`--hook-only: ${agent} runs without exec's sandbox`);
                  // The hook lets a shell command in the project through and cannot see what it writes: only the sandbox stopped it.
                  expect(run.fileAfter, describeRun(run)).toBe(doneContent(run.action));
                },
              ),
            RUN_TIMEOUT,
          );
      });

      describe("under `twinlock plan`, the pair's planner (in plan's sandbox, only the handoff folder writable)", () => {
        for (const kind of ["write", "edit"] as const)
          it(
            `${tool} does the ${kind} on a file in its handoff folder`,
            () =>
              judged(
                { agent, scenario: `plan (planner's session): ${kind} in its handoff folder`, expected: "done, in the sandbox" },
                () => runAgent(agent, kind, "installed", { trust: codexTrust(agent), plan: { on: "handoff" } }),
                (run) => {
                  expect(run.fileAfter, describeRun(run)).toBe(doneContent(run.action));
                  expect(run.stderr).toContain("MD-29's planner session is bound");
                  if (SANDBOXED.has(agent)) expect(run.stderr).toContain("runs in a bubblewrap sandbox");
                },
              ),
            RUN_TIMEOUT,
          );
        for (const kind of ACTION_KINDS) {
          const key: Scenario = `plan-target-${kind}`;
          held(
            agent,
            key,
            `${tool} asks the hook and does not do the ${kind} on an action target outside its handoff folder`,
            () =>
              judged(
                {
                  agent,
                  key,
                  scenario: `plan (planner's session): ${kind} on an action target`,
                  expected: `not done, the hook says "${PLANNER_DENY[kind]}"`,
                },
                () => runAgent(agent, kind, "installed", { trust: codexTrust(agent), plan: { on: "target" } }),
                (run) => {
                  expectNotDone(run, kind);
                  // The hook's own reason reached the model: the hook held it, not only the sandbox.
                  expect(run.toolResults.join("\n"), describeRun(run)).toContain(PLANNER_DENY[kind]);
                },
              ),
            RUN_TIMEOUT,
          );
        }
        /** The pair's handoff hash the run file records after a freeze run (the action's file is the run file), or "none". */
        const frozenHash = (run: AgentRun) =>
          String(JSON.parse(run.fileAfter ?? "{}").state?.workflows?.["MD-29"]?.handoff?.hash ?? "none");
        const freezing = `through twinlock's stdio MCP server registered as \`twinlock\` (twinlock_submit_handoff)`;
        if (agent !== "codex")
          it(
            `${tool} freezes the handoff ${freezing}, through plan's relay to its own server outside the sandbox`,
            () =>
              judged(
                {
                  agent,
                  scenario: "plan: freeze the handoff through twinlock's MCP server (twinlock_submit_handoff)",
                  expected: "frozen: the run file records the handoff's hash",
                },
                () => runAgent(agent, "freeze", "installed", { plan: { on: "handoff" } }),
                (run) => {
                  expect(run.stderr).toContain("runs in a bubblewrap sandbox: it may write only its handoff folder");
                  expect(frozenHash(run), describeRun(run)).toMatch(/^sha256:[0-9a-f]{64}$/);
                  // The server's answer reached the model (Claude Code passes its JSON, Gemini CLI its text).
                  expect(run.toolResults.join("\n"), describeRun(run)).toMatch(/"ok":true|froze revision 1 of MD-29/);
                },
              ),
            RUN_TIMEOUT,
          );
        if (agent === "codex")
          it.skip(`${tool}'s freeze ${freezing}: not driven here. Codex 0.169.0 offers MCP tools to the model only through its client-side tool_search (a call by the qualified name is "unsupported call"), which the scripted model does not speak`, () => {});
      });

      describe("with the hook failing", () => {
        for (const { hook, how } of FAILURES)
          held(
            agent,
            hook,
            `${tool} does not do the write when ${how}`,
            () =>
              // Codex's hook is trusted here (the stand-in changed its command, so by the bypass), so that what is measured
              // is the failure, not finding 1.
              judged(
                {
                  agent,
                  key: hook,
                  scenario: `no session, hook failing: ${hook} (${how})`,
                  expected: "not done (the tool fails closed)",
                },
                () => runAgent(agent, "write", hook, { trust: agent === "codex" ? "bypass" : "none" }),
                (run) => expectNotDone(run, "write"),
              ),
            RUN_TIMEOUT,
          );
      });
    });
  }
});

describe.skipIf(ENABLED)("the real agent CLIs", () => {
  it.skip(`skipped: set TWINLOCK_REAL_AGENTS=1 after scripts/install-agent-clis.sh (installs into ${AGENT_CLIS_DIR})`, () => {});
});

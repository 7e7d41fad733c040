import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { removeGateRuns } from "../../src/test-support/run-fixture.js";
import { ensureBuilt } from "../support/ensure-built.js";
import { AGENT_CLIS, AGENT_CLIS_DIR, missingCli, PINNED, REAL_AGENTS, type RealAgent } from "./agent-clis.js";
import { type AgentRun, describeRun, type HookState, runAgent } from "./run-agent.js";
import { ACTION_KINDS, type ActionKind, CRAFTED_SPACES, doneContent, EDIT_BEFORE, FINAL_TEXT, READS } from "./scripted-action.js";

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
  | "outward"
  | "ci-env"
  | `exec-outside-${ActionKind}`
  | `exec-target-${ActionKind}`
  | `plan-target-${ActionKind}`;
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

/** The call was not done: the file is as it was before the run. */
function expectNotDone(run: AgentRun, kind: ActionKind) {
  expect(run.fileAfter, describeRun(run)).toBe(run.exec || run.plan ? run.before : kind === "edit" ? EDIT_BEFORE : null);
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
  afterAll(() => removeGateRuns());

  for (const agent of REAL_AGENTS) {
    const missing = missingCli(agent);
    const tool = NAMES[agent];
    describe.skipIf(missing !== undefined)(missing ? `${tool}: skipped, ${missing}` : tool, () => {
      describe("with the hook uninstalled (proves the harness)", () => {
        for (const kind of ACTION_KINDS)
          it(
            `${tool} does the scripted ${kind} and sends its result back to the model`,
            async () => {
              const run = await runAgent(agent, kind, "uninstalled");
              expect(run.fileAfter, describeRun(run)).toBe(doneContent(run.action));
              expect(run.toolResults.length, describeRun(run)).toBeGreaterThan(0);
              expect(run.hookCalls).toEqual([]);
              expect(run.stdout).toContain(FINAL_TEXT);
            },
            RUN_TIMEOUT,
          );
      });

      describe("with the hook installed and no session bound", () => {
        for (const kind of ACTION_KINDS)
          held(
            agent,
            agent === "codex" ? "untrusted" : "installed",
            `${tool} asks the hook and does not do the ${kind}`,
            async () => {
              const run = await runAgent(agent, kind, "installed");
              expectNotDone(run, kind);
              // The hook's own reason reached the model: the tool asked it.
              expect(run.toolResults.join("\n"), describeRun(run)).toContain("no twinlock session is bound");
            },
            RUN_TIMEOUT,
          );
        if (agent === "codex")
          for (const kind of ACTION_KINDS)
            it(
              `${tool} with the hook trusted by \`hooks install --trust\` (no --dangerously-bypass-hook-trust) asks it and does not do the ${kind}`,
              async () => {
                const run = await runAgent(agent, kind, "installed", { trust: "twinlock" });
                expectNotDone(run, kind);
                expect(run.toolResults.join("\n"), describeRun(run)).toContain("no twinlock session is bound");
              },
              RUN_TIMEOUT,
            );
      });

      if (agent !== "codex")
        describe("with a call outward and no session bound", () => {
          const call = agent === "claude" ? "Agent (a subagent)" : "web_fetch";
          held(
            agent,
            "outward",
            `${tool} asks the hook before ${call}`,
            async () => {
              const run = await runAgent(agent, "outward", "installed");
              expect(run.toolResults.join("\n"), describeRun(run)).toContain("no twinlock session is bound");
            },
            RUN_TIMEOUT,
          );
        });

      describe("in CI (GITHUB_SHA set), the agent's session variables set", () => {
        held(
          agent,
          "ci-env",
          `${tool} hands the hook TWINLOCK_RUN, TWINLOCK_EXECUTOR and TWINLOCK_SESSION`,
          async () => {
            const session = { TWINLOCK_RUN: "/nowhere/run.json", TWINLOCK_EXECUTOR: "MD-1", TWINLOCK_SESSION: "not-a-real-secret" };
            const run = await runAgent(agent, "write", "installed", {
              trust: agent === "codex" ? "twinlock" : "none",
              env: { ...session, GITHUB_SHA: "0123abcd" },
            });
            expectNotDone(run, "write");
            // The hook saw the variables: it looked for that session's binding (and found none), not for unset ones.
            expect(run.toolResults.join("\n"), describeRun(run)).toContain("no session of MD-1 on /nowhere/run.json is bound");
          },
          RUN_TIMEOUT,
        );
      });

      if (agent === "codex")
        describe("with a crafted patch and no session bound", () => {
          held(
            agent,
            "crafted-patch",
            `${tool} with the hook trusted does not apply a patch adding a file outside the project whose one line is ${CRAFTED_SPACES} spaces`,
            async () => {
              const run = await runAgent(agent, "crafted-patch", "installed", { trust: "twinlock" });
              expect(run.toolResults.join("\n"), describeRun(run)).toContain("no twinlock session is bound");
              expect(run.fileAfter, describeRun(run)).toBeNull();
            },
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
                for (const hook of ["uninstalled", "installed"] as const) {
                  const run = await runAgent(agent, "reads", hook);
                  // Each Read answered and the model asked again: one request a Read, and the last.
                  expect(run.requests.length, describeRun(run)).toBeGreaterThanOrEqual(READS + 1);
                  expect(run.toolResults.join("\n"), describeRun(run)).toContain(EDIT_BEFORE.trim());
                  expect(run.toolResults.join("\n"), describeRun(run)).not.toContain("twinlock");
                  times[hook].push(run.durationMs);
                }
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
          async () => {
            const run = await runAgent(agent, "write", "installed", {
              trust: agent === "codex" ? "twinlock" : "none",
              env: { TWINLOCK_HOOK_TEST_STALL: "1" },
            });
            expectNotDone(run, "write");
            expect(run.toolResults.join("\n"), describeRun(run)).toContain("did not decide within 5000 ms");
          },
          RUN_TIMEOUT,
        );
      });

      describe("under `twinlock exec`, an admitted executor (in exec's sandbox)", () => {
        for (const kind of ACTION_KINDS) {
          held(
            agent,
            `exec-target-${kind}`,
            `${tool} does the ${kind} on an admitted target`,
            async () => {
              const run = await runAgent(agent, kind, "installed", { trust: codexTrust(agent), exec: { on: "target" } });
              expect(run.fileAfter, describeRun(run)).toBe(doneContent(run.action));
              if (SANDBOXED.has(agent)) expect(run.stderr).toContain("runs in a bubblewrap sandbox");
            },
            RUN_TIMEOUT,
          );
          held(
            agent,
            `exec-outside-${kind}`,
            `${tool} does not do the ${kind} on a file of the project outside the targets`,
            async () => {
              const run = await runAgent(agent, kind, "installed", { trust: codexTrust(agent), exec: { on: "outside" } });
              expectNotDone(run, kind);
            },
            RUN_TIMEOUT,
          );
        }
        if (agent === "claude")
          it(
            `${tool}'s shell can make a new file beside a file target (the one thing its folder's mount adds), and exec names it after the command`,
            async () => {
              const run = await runAgent(agent, "shell", "installed", { exec: { on: "outside" } });
              expect(run.fileAfter, describeRun(run)).toBe(doneContent(run.action));
              expect(run.stderr).toMatch(
                /claude left a new entry beside the file targets that is no target: .*cart\/extra\.go \(not a target/,
              );
            },
            RUN_TIMEOUT,
          );
        for (const { hook, how } of FAILURES)
          it(
            `${tool} does not do the write outside the targets when ${how}${SANDBOXED.has(agent) ? " (the sandbox holds)" : ""}`,
            async () => {
              const run = await runAgent(agent, "write", hook, { trust: agent === "codex" ? "bypass" : "none", exec: { on: "outside" } });
              expectNotDone(run, "write");
              // The hook was asked and failed: what held is not its answer.
              if (hook !== "not-found") expect(run.hookCalls.length, describeRun(run)).toBeGreaterThan(0);
            },
            RUN_TIMEOUT,
          );
        it(
          `${tool}'s shell does not rewrite the hook's own configuration (${AGENT_CLIS[agent].hookConfig}) in the project`,
          async () => {
            const run = await runAgent(agent, "shell", "installed", { trust: codexTrust(agent), exec: { on: "hook-config" } });
            expect(run.before, describeRun(run)).toContain("twinlock");
            expectNotDone(run, "shell");
          },
          RUN_TIMEOUT,
        );
        if (SANDBOXED.has(agent))
          it(
            `${tool} under \`exec --hook-only\` runs without the sandbox and says what that gives up`,
            async () => {
              const run = await runAgent(agent, "shell", "installed", {
                trust: codexTrust(agent),
                exec: { on: "outside", flags: ["--hook-only"] },
              });
              expect(run.stderr).toContain(`--hook-only: ${agent} runs without exec's sandbox`);
              // The hook lets a shell command in the project through and cannot see what it writes: only the sandbox stopped it.
              expect(run.fileAfter, describeRun(run)).toBe(doneContent(run.action));
            },
            RUN_TIMEOUT,
          );
      });

      describe("under `twinlock plan`, the pair's planner (in plan's sandbox, only the handoff folder writable)", () => {
        for (const kind of ["write", "edit"] as const)
          it(
            `${tool} does the ${kind} on a file in its handoff folder`,
            async () => {
              const run = await runAgent(agent, kind, "installed", { trust: codexTrust(agent), plan: { on: "handoff" } });
              expect(run.fileAfter, describeRun(run)).toBe(doneContent(run.action));
              expect(run.stderr).toContain("MD-29's planner session is bound");
              if (SANDBOXED.has(agent)) expect(run.stderr).toContain("runs in a bubblewrap sandbox");
            },
            RUN_TIMEOUT,
          );
        for (const kind of ACTION_KINDS)
          held(
            agent,
            `plan-target-${kind}`,
            `${tool} asks the hook and does not do the ${kind} on an action target outside its handoff folder`,
            async () => {
              const run = await runAgent(agent, kind, "installed", { trust: codexTrust(agent), plan: { on: "target" } });
              expectNotDone(run, kind);
              // The hook's own reason reached the model: the hook held it, not only the sandbox.
              expect(run.toolResults.join("\n"), describeRun(run)).toContain(PLANNER_DENY[kind]);
            },
            RUN_TIMEOUT,
          );
        /** The pair's handoff hash the run file records after a freeze run (the action's file is the run file), or "none". */
        const frozenHash = (run: AgentRun) =>
          String(JSON.parse(run.fileAfter ?? "{}").state?.workflows?.["MD-29"]?.handoff?.hash ?? "none");
        const freezing = `through twinlock's stdio MCP server registered as \`twinlock\` (twinlock_submit_handoff)`;
        if (agent !== "codex")
          it(
            `${tool} freezes the handoff ${freezing}, through plan's relay to its own server outside the sandbox`,
            async () => {
              const run = await runAgent(agent, "freeze", "installed", { plan: { on: "handoff" } });
              expect(run.stderr).toContain("runs in a bubblewrap sandbox: it may write only its handoff folder");
              expect(frozenHash(run), describeRun(run)).toMatch(/^sha256:[0-9a-f]{64}$/);
              // The server's answer reached the model (Claude Code passes its JSON, Gemini CLI its text).
              expect(run.toolResults.join("\n"), describeRun(run)).toMatch(/"ok":true|froze revision 1 of MD-29/);
            },
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
            async () => {
              // Codex's hook is trusted here (the stand-in changed its command, so by the bypass), so that what is measured
              // is the failure, not finding 1.
              const run = await runAgent(agent, "write", hook, { trust: agent === "codex" ? "bypass" : "none" });
              expectNotDone(run, "write");
            },
            RUN_TIMEOUT,
          );
      });
    });
  }
});

describe.skipIf(ENABLED)("the real agent CLIs", () => {
  it.skip(`skipped: set TWINLOCK_REAL_AGENTS=1 after scripts/install-agent-clis.sh (installs into ${AGENT_CLIS_DIR})`, () => {});
});

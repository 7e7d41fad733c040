/**
 * The library speaks data (issue 25 point 2): below the front ends no string
 * says a `twinlock …` command line or a `--flag`; a refusal carries its next
 * step as data (`details.next`, src/errors/step-hint.ts) and each front end
 * words it. String literals and template parts are read with TypeScript's own
 * parser (comments do not count). TODAY is what each file still says: it may
 * only shrink, and a file that says less must lower its count here, so the
 * list tracks the work left; EXEMPT names the files whose flags are another
 * program's (bubblewrap, git, the agent CLIs).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Command } from "commander";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { registerCommands } from "./cli/register-commands.js";

const SRC = path.dirname(new URL(import.meta.url).pathname);

/** The front ends (and what sits beside them), whose words are theirs to choose. */
const FRONT_ENDS = new Set(["cli", "server", "web", "mcp", "hook", "adapters", "demo", "test-support"]);

/** Files whose flags belong to another program, with why. */
const EXEMPT: Readonly<Record<string, string>> = {
  "checks/block-skeleton.ts": "the prompt text it writes tells the agent which commands to run: a prompt's words, not a refusal's",
  "checks/scaffold-pair.ts": "the prompt text it writes tells the agent which commands to run: a prompt's words, not a refusal's",
  "sandbox/bubblewrap-argv.ts": "bubblewrap's own argument vector (--bind, --ro-bind): flags of another program",
  "sandbox/agent-tool.ts": "the agent CLIs' own flags twinlock passes them (claude --settings, codex -c): another program's",
  "sandbox/find-bubblewrap.ts": "bwrap's --version and probe flags: another program's",
  "conformance/changed-files.ts": "git's own flags (diff --name-status, --no-renames): another program's",
  "store/postgres/postgres-migrations.ts": "SQL comments (-- …) in the migrations, not flags",
};

/** The strings below the front ends that still say a command line or a flag, by file: to reach zero. */
const TODAY: Readonly<Record<string, number>> = {
  "attest/attest-run.ts": 2,
  "checks/check-bodies.ts": 1,
  "checks/check-graph-fresh.ts": 2,
  "checks/check-pair-count.ts": 1,
  "checks/check-suite-signed.ts": 1,
  "checks/check-trust-config.ts": 3,
  "checks/validate-suite.ts": 1,
  "ci/read-exported-trust.ts": 11,
  "ci/read-trust-file.ts": 11,
  "ci/signed-trust.ts": 5,
  "ci/verify-run.ts": 1,
  "gate/admit.ts": 3,
  "gate/approve-apply.ts": 1,
  "gate/bind-session.ts": 8,
  "gate/close-workflow.ts": 11,
  "gate/configure-webhooks.ts": 3,
  "gate/consent-pair-execution.ts": 3,
  "gate/dry-run-needed.ts": 4,
  "gate/freeze-pair-handoff.ts": 4,
  "gate/hard-stops.ts": 1,
  "gate/init-run.ts": 5,
  "gate/pair-status-from-flags.ts": 2,
  "gate/pair-status.ts": 7,
  "gate/present-files.ts": 1,
  "gate/present-plan.ts": 17,
  "gate/present-records.ts": 1,
  "gate/review-comments.ts": 4,
  "gate/review-pair-plan.ts": 11,
  "github/check-run-of.ts": 1,
  "github/github-app-options.ts": 12,
  "home/frozen-quota.ts": 1,
  "home/gate-home.ts": 5,
  "home/run-checkpoints.ts": 1,
  "home/run-ledger.ts": 3,
  "home/stop-requests.ts": 1,
  "home/trusted-gate-keys.ts": 2,
  "input/parse-input.ts": 3,
  "notify/webhook.ts": 2,
  "passkey/passkey-enrolment.ts": 1,
  "passkey/reviewer-registry.ts": 2,
  "run/admission/checks/consent-scope.ts": 1,
  "run/admission/checks/dry-run-passed.ts": 1,
  "run/admission/checks/planner-is-twin.ts": 1,
  "run/admission/checks/suite-pinned.ts": 1,
  "run/next-step.ts": 9,
  "sandbox/exec-sandbox.ts": 8,
  "sandbox/identify-agent-tool.ts": 4,
  "sandbox/target-parents.ts": 1,
  "store/atomic-write.ts": 1,
  "store/postgres/postgres-run-store.ts": 2,
  "store/run-file.ts": 4,
  "store/run-store.ts": 1,
  "suite/find-suite-root.ts": 2,
  "suite/load-suite.ts": 1,
  "trust/gate-statement.ts": 3,
  "trust/judge-receipt-trust.ts": 1,
  "trust/keys.ts": 4,
};

/** The CLI's command names (`trust`, `validate`, …), from the command table itself. */
const COMMANDS: ReadonlySet<string> = (() => {
  const program = new Command();
  registerCommands(program, () => {});
  return new Set(program.commands.map((c) => c.name()));
})();

/** Whether one string says a twinlock command line (`twinlock validate`, not "the twinlock gate") or a flag. */
function speaksTerminal(text: string): boolean {
  for (const m of text.matchAll(/\btwinlock ([a-z][a-z-]*)/g)) if (COMMANDS.has(m[1] as string)) return true;
  return /(^|[\s(`'"])--[a-z][a-z-]+/.test(text);
}

/** How many string literals and template parts of `source` speak the terminal. */
function terminalStrings(file: string, source: string): number {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true);
  let n = 0;
  const visit = (node: ts.Node): void => {
    if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node)) &&
      speaksTerminal(node.text)
    )
      n++;
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return n;
}

function libraryFiles(): string[] {
  return (readdirSync(SRC, { recursive: true }) as string[])
    .map((f) => f.split(path.sep).join("/"))
    .filter((f) => /\.(ts|mts)$/.test(f) && !f.endsWith(".test.ts") && !f.endsWith(".d.ts") && f.includes("/"))
    .filter((f) => !FRONT_ENDS.has(f.slice(0, f.indexOf("/"))) && !Object.hasOwn(EXEMPT, f));
}

describe("the library speaks data, not the terminal", () => {
  it("tells a command line or a flag in a string, and not a word that merely contains one", () => {
    expect(speaksTerminal("fix it (twinlock validate --suite x) first")).toBe(true);
    expect(speaksTerminal("pass --key FILE")).toBe(true);
    expect(speaksTerminal("the twinlock gate")).toBe(false);
    expect(speaksTerminal("a well-known key")).toBe(false);
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text under test holds a template
    expect(terminalStrings("x.ts", "// twinlock trust pin --key\nconst a = `re-pin: twinlock trust pin ${b} --key`;")).toBe(2);
  });

  it("has no new command line or flag below the front ends, and each file's count only shrinks", () => {
    const now: Record<string, number> = {};
    for (const f of libraryFiles()) {
      const n = terminalStrings(f, readFileSync(path.join(SRC, f), "utf8"));
      if (n > 0) now[f] = n;
    }
    const grown = Object.entries(now)
      .filter(([f, n]) => n > (TODAY[f] ?? 0))
      .map(([f, n]) => `${f}: ${n} (was ${TODAY[f] ?? 0})`);
    expect(grown, "strings below the front ends that say a command or a flag: give a refusal details.next instead").toEqual([]);
    const shrunk = Object.entries(TODAY)
      .filter(([f, n]) => (now[f] ?? 0) < n)
      .map(([f, n]) => `${f}: ${now[f] ?? 0} (was ${n})`);
    expect(shrunk, "files that say less now: lower their count in TODAY").toEqual([]);
  });

  it("keeps the pins' refusals free of command lines: suite-pins.ts words its next steps as data", () => {
    expect(TODAY["home/suite-pins.ts"]).toBeUndefined();
  });
});

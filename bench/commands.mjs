/**
 * The command section's table: one row per CLI command, in the order a
 * paired flow uses them, so each row runs on the state the rows before it
 * left. To add a command, add a row: `args(ctx)` builds its argv; `needs`
 * names rows that must have succeeded first in the same sequence; `capture`
 * stores a value read from its stdout into `ctx` for later rows; `expect` is
 * the exit code that counts as success (default 0). A command the CLI does
 * not know yet ("unknown command") is printed as n/a.
 *
 * ctx: suite (a copy of the bundled example suite listing one generated reviewer key and a planner freeze key, pinned in the gate home
 * TWINLOCK_HOME names), key (the reviewer's private key file), freezeKey (the planner's), planner/executor (its MD-29 → MD-30
 * pair), handoff (a ready handoff folder), run (a run-file path that does not
 * exist yet), handoffHash (captured from `hash` or `freeze-pair-handoff`).
 */

const HASH = /sha256:[0-9a-f]{64}/;
const hashOption = (ctx) => (ctx.handoffHash ? ["--handoff-hash", ctx.handoffHash] : []);

export const COMMANDS = [
  { name: "--help", args: () => ["--help"] },
  { name: "validate", args: (ctx) => ["validate", "--suite", ctx.suite] },
  { name: "audit-bodies --check", args: (ctx) => ["audit-bodies", "--suite", ctx.suite, "--check"] },
  { name: "graph --check", args: (ctx) => ["graph", "--suite", ctx.suite, "--check"] },
  { name: "hash", args: (ctx) => ["hash", ctx.handoff], capture: { handoffHash: HASH } },
  { name: "readiness", args: (ctx) => ["readiness", ctx.handoff] },
  {
    name: "pair-status (stateless)",
    args: (ctx) => ["pair-status", ctx.planner, "--suite", ctx.suite, "--handoff-ready", "--review-status", "approved"],
  },
  {
    name: "init-run",
    args: (ctx) => [
      "init-run",
      ctx.run,
      "--suite",
      ctx.suite,
      "--planner",
      ctx.planner,
      "--mode",
      "DRAFT_ONLY",
      "--environment",
      "staging",
      "--actions",
      "all",
      "--budget",
      "10",
    ],
  },
  {
    name: "freeze-pair-handoff",
    needs: ["init-run"],
    args: (ctx) => ["freeze-pair-handoff", ctx.run, ctx.planner, "--handoff", ctx.handoff, ...hashOption(ctx), "--key", ctx.freezeKey],
    capture: { handoffHash: HASH },
  },
  { name: "pair-status (run)", needs: ["init-run"], args: (ctx) => ["pair-status", ctx.run, ctx.planner] },
  { name: "present", needs: ["freeze-pair-handoff"], args: (ctx) => ["present", ctx.run, ctx.planner] },
  {
    name: "review-pair-plan",
    needs: ["freeze-pair-handoff"],
    args: (ctx) => ["review-pair-plan", ctx.run, ctx.planner, "--decision", "approved", ...hashOption(ctx), "--key", ctx.key],
  },
  {
    name: "consent-pair-execution",
    needs: ["review-pair-plan"],
    args: (ctx) => ["consent-pair-execution", ctx.run, ctx.planner, "--approve", ...hashOption(ctx), "--key", ctx.key],
  },
  { name: "admit", needs: ["consent-pair-execution"], args: (ctx) => ["admit", ctx.run, ctx.executor] },
  { name: "checkout", needs: ["admit"], args: (ctx) => ["checkout", ctx.run, ctx.executor, `${ctx.run}.approved`] },
  { name: "verify-receipts", needs: ["admit"], args: (ctx) => ["verify-receipts", ctx.run] },
  { name: "log", needs: ["init-run"], args: (ctx) => ["log", ctx.run] },
  { name: "verify-log", needs: ["init-run"], args: (ctx) => ["verify-log", ctx.run] },
];

import type { Command } from "commander";
import type { CommandResult } from "./command-result.js";

type Sink = (result: CommandResult) => void;

/**
 * Declare every command. Each action imports its module only when it runs,
 * so `twinlock --help` stays fast however large the command set grows.
 */
export function registerCommands(program: Command, sink: Sink): void {
  program
    .command("validate")
    .description("run every suite check and print the pair count and problems")
    .option("--suite <dir>", "suite folder (default: TWINLOCK_SUITE, else nearest twinlock.yaml upward)")
    .option("--expect-pairs <n>", "fail unless the suite has exactly N genuine pairs")
    .action(async (opts) => sink((await import("./commands/validate.js")).runValidate(opts)));

  program
    .command("audit-bodies")
    .description("check prompt bodies for the required blocks, markers and phrases")
    .option("--suite <dir>", "suite folder")
    .option("--check", "exit 1 when any problem is found")
    .action(async (opts) => sink((await import("./commands/audit-bodies.js")).runAuditBodies(opts)));

  program
    .command("graph")
    .description("build the capability graph (json, dot or mermaid); --check compares it with the committed file")
    .option("--suite <dir>", "suite folder")
    .option("--format <format>", "json, dot or mermaid (default: from --out, else json)")
    .option("--out <file>", "write the graph to FILE")
    .option("--check", "fail when FILE (or the suite's graph_file, or capability-graph.json) is stale")
    .action(async (opts) => sink((await import("./commands/graph.js")).runGraph(opts)));

  program
    .command("new-pair")
    .description("scaffold a correct planner + executor pair into the suite")
    .option("--suite <dir>", "suite folder")
    .requiredOption("--planner <id>", "planner prompt ID, e.g. MD-41")
    .requiredOption("--executor <id>", "executor prompt ID, e.g. MD-42")
    .requiredOption("--planner-title <title>", "planner title")
    .requiredOption("--executor-title <title>", "executor title (the consent question names it)")
    .requiredOption("--category <name>", "category, e.g. debugging")
    .option("--risk <level>", "low, medium or high", "medium")
    .option("--requires <ids>", "comma-separated prompt IDs both prompts require")
    .option("--dir <folder>", "folder inside the suite (default: the category)")
    .action(async (opts) => sink((await import("./commands/new-pair.js")).runNewPair(opts)));
}

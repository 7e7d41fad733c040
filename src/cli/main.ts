import { Command, CommanderError, Option } from "commander";
import { type ErrorCode, type ErrorKind, EXIT, TwinlockError, UsageError } from "../errors/errors.js";
import { redactSecrets } from "../errors/redact-secrets.js";
import { isStepHint } from "../errors/step-hint.js";
import { showInvisible } from "../input/clean-text.js";
import { isTokenRefusal } from "../server/token-refusal.js";
import { VERSION } from "../version.js";
import { writeOutput } from "../write-output.js";
import type { CommandResult } from "./command-result.js";
import { describeUsageError } from "./describe-usage-error.js";
import { registerCommands } from "./register-commands.js";
import { wordWithStepHint } from "./word-step-hint.js";
import { wordTokenRefusalForCli } from "./word-token-refusal.js";

/** Where the CLI writes; tests pass their own. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

const defaultIo: CliIo = {
  stdout: (t) => writeOutput(1, t),
  stderr: (t) => writeOutput(2, t),
};

/**
 * Run the CLI on `argv` (without `node` and the script) and return the exit
 * code. The one place that turns thrown errors into exit codes (SPEC §6):
 * usage 2, refusal or conflict or integrity 1; anything else is an internal
 * error whose stack shows only with `--debug`.
 */
export async function main(argv: string[], io: CliIo = defaultIo): Promise<number> {
  // After `--` come another command's arguments (`exec … -- CMD`): its --json is not ours.
  const own = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
  const json = own.includes("--json");
  const debug = own.includes("--debug") || process.env.TWINLOCK_DEBUG === "1";
  let result: CommandResult | undefined;
  const program = new Command("twinlock")
    .description("Make the plan-review and exact-twin execution gate for paired agent prompts enforceable.")
    .version(VERSION, "-V, --version")
    .showSuggestionAfterError(true)
    .exitOverride()
    .configureOutput(outputOf(io));
  const sink = (r: CommandResult) => {
    result = r;
  };
  // A call that names a command builds that one alone; anything else (help, an unknown or misspelt name) builds all,
  // so the list and the suggestions are whole.
  const first = argv[0];
  if (first !== undefined && !first.startsWith("-") && first !== "help") registerCommands(program, sink, first);
  if (program.commands.length === 0) registerCommands(program, sink);
  // Commands inherit the exit override and the output from the program when they are made. The options every
  // command shares go on the command this call names (and its subcommands: `trust pin`), not on all fifty.
  const named = namedCommands(program, argv);
  for (const sub of program.commands.flatMap((c) => [c, ...c.commands])) {
    if (sub.commands.length > 0) continue;
    if (named.includes(sub)) addSharedOptions(sub);
    // The command list shows `[options]` for a command with options: every command takes --json.
    else if (sub.options.length === 0) sub.addOption(jsonOption());
  }
  // A command group called without its subcommand (`twinlock trust`) is an incomplete call, not a silent success.
  for (const group of program.commands.filter((c) => c.commands.length > 0))
    group.action(() => {
      const subs = group.commands.map((c) => c.name());
      throw new UsageError(
        `${group.name()} needs a subcommand (${subs.join(", ")}); run \`twinlock ${group.name()} --help\` for what each does`,
      );
    });
  if (argv.length === 0) {
    // No command: show what there is, and say it was not a complete call.
    io.stderr(program.helpInformation());
    return EXIT.usage;
  }
  if (argv[0] === "help" && argv[1] !== undefined && !program.commands.some((c) => c.name() === argv[1])) {
    return emit(
      { json, io },
      EXIT.usage,
      "usage",
      `no command ${JSON.stringify(argv[1])}; run \`twinlock --help\` for the list`,
      undefined,
      "BAD_INPUT",
    );
  }
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    return report(error, { json, debug, io, usage: (e) => describeUsageError(e, program, argv) });
  }
  if (!result) return EXIT.ok;
  if (json) io.stdout(`${JSON.stringify(result.json, null, 2)}\n`);
  else if (result.text !== "") io.stdout(`${result.text}\n`);
  return result.exitCode;
}

/** The options every command takes: --json, --debug, and --home and --store where it reads runs or the gate home. */
function addSharedOptions(command: Command): void {
  command.addOption(jsonOption());
  command.addOption(new Option("--debug", "show internal stack traces").hideHelp());
  if (HOME_COMMANDS.has(command.name()))
    command.addOption(
      new Option("--home <dir>", "gate home (default: TWINLOCK_HOME, else $XDG_STATE_HOME/twinlock, else ~/.local/state/twinlock)"),
    );
  if (STORE_COMMANDS.has(command.name()))
    command.addOption(
      new Option("--store <url>", "a team's PostgreSQL store, postgres://… (default: TWINLOCK_STORE, else the gate home's folder store)"),
    );
}

function jsonOption(): Option {
  return new Option("--json", "print one JSON document on stdout");
}

/**
 * The command `argv` names (`twinlock validate …`, `twinlock help validate`)
 * with its subcommands, when it names one: the only commands this call can
 * run, parse options for, or show help for.
 */
function namedCommands(program: Command, argv: readonly string[]): Command[] {
  const name = argv[0] === "help" ? argv[1] : argv[0];
  const named = program.commands.find((c) => c.name() === name);
  return named ? [named, ...named.commands] : [];
}

/**
 * Where commander writes, and how wide and colourful its help is. Asking
 * `process.stdout` (commander's default) would set up the stdout stream on
 * every call: the help width comes from COLUMNS (else 80) and help has no colour.
 */
function outputOf(io: CliIo) {
  const width = Number(process.env.COLUMNS);
  return {
    writeOut: (t: string) => io.stdout(t),
    // Commander's own parse errors are re-reported below as one line.
    writeErr: () => {},
    getOutHelpWidth: () => (Number.isInteger(width) && width >= 40 ? width : 80),
    getErrHelpWidth: () => (Number.isInteger(width) && width >= 40 ? width : 80),
    getOutHasColors: () => false,
    getErrHasColors: () => false,
  };
}

function report(error: unknown, ctx: { json: boolean; debug: boolean; io: CliIo; usage: (error: CommanderError) => string }): number {
  if (error instanceof CommanderError) {
    if (error.exitCode === 0 || error.code === "commander.helpDisplayed" || error.code === "commander.version") return EXIT.ok;
    if (error.code === "commander.help") return EXIT.ok;
    return emit(ctx, EXIT.usage, "usage", ctx.usage(error), undefined, "BAD_INPUT");
  }
  if (error instanceof TwinlockError) {
    const shown = CLI_ERRORS[error.kind];
    // A refusal given as data is worded here, in the CLI's own words (its commands); the rest carry their message.
    const next = error.details.next;
    const message = isTokenRefusal(error.details)
      ? wordTokenRefusalForCli(error.details)
      : isStepHint(next)
        ? wordWithStepHint(error.message, next)
        : error.message;
    return emit(ctx, shown.exit, shown.word, message, shown.details ? error.details : undefined, error.code);
  }
  const message = `internal error: ${(error as Error)?.message ?? String(error)}${ctx.debug ? "" : " (run again with --debug for the stack trace, and report it)"}`;
  if (ctx.debug && error instanceof Error && error.stack) ctx.io.stderr(`${error.stack}\n`);
  return emit(ctx, EXIT.refused, "internal", message, undefined, "INTERNAL");
}

/**
 * The CLI's one mapping from an error's kind (src/errors/error-codes.ts): the
 * exit code of SPEC §6, the word its JSON error document names the kind by,
 * and whether it shows the error's details.
 */
export const CLI_ERRORS: Record<ErrorKind, { exit: number; word: string; details: boolean }> = {
  usage: { exit: EXIT.usage, word: "usage", details: false },
  refused: { exit: EXIT.refused, word: "refused", details: true },
  conflict: { exit: EXIT.refused, word: "conflict", details: false },
  unavailable: { exit: EXIT.refused, word: "conflict", details: false },
  integrity: { exit: EXIT.refused, word: "integrity", details: true },
  internal: { exit: EXIT.refused, word: "internal", details: false },
};

// biome-ignore lint/complexity/useRegexLiterals: as a literal, the control characters it matches trip the regex lints
const CONTROLS = new RegExp(String.raw`[\u0000-\u001f\u007f-\u009f]`, "g");

function emit(
  ctx: { json: boolean; io: CliIo },
  code: number,
  kind: string,
  raw: string,
  details?: Record<string, unknown>,
  errorCode?: ErrorCode,
): number {
  // An error is one line whatever it quotes: paths and inputs may hold newlines or control characters.
  // C0 and C1 controls escaped, invisible and direction characters written out (⟨U+…⟩).
  // No store password, key text or token secret is ever printed, whatever message quotes it.
  const message = showInvisible(
    redactSecrets(raw).replace(CONTROLS, (c) => {
      const json = JSON.stringify(c).slice(1, -1);
      return json.length > 1 ? json : `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, "0")}`;
    }),
  );
  const shownDetails =
    details && Object.fromEntries(Object.entries(details).map(([k, v]) => [k, typeof v === "string" ? redactSecrets(v) : v]));
  if (ctx.json)
    ctx.io.stdout(
      `${JSON.stringify({ ok: false, error: { kind, ...(errorCode ? { code: errorCode } : {}), message, ...(shownDetails ? { details: shownDetails } : {}) } }, null, 2)}\n`,
    );
  else ctx.io.stderr(`twinlock: ${message}\n`);
  return code;
}

/** Commands that read or write runs: the gate home holds their pins and frozen bytes, the store their events. */
const RUN_COMMANDS = [
  "init-run",
  "freeze-pair-handoff",
  "present",
  "review-pair-plan",
  "consent-pair-execution",
  "approve-apply",
  "admit",
  "dry-run",
  "dry-run-result",
  "pair-status",
  "stop",
  "resolve-stop",
  "close",
  "checkout",
  "exec",
  "plan",
  "serve",
  "create",
  "mcp",
  "export",
  "import",
];

/** The trust commands (`trust`, `reviewer`, `token` subcommands): the gate home's, or with `--store` the team database's. */
const TRUST_COMMANDS = ["pin", "list", "unpin", "add-pinner", "gate-key", "add-gate-key", "revoke", "invite", "add", "remove"];

/** Commands that take `--store URL` (a team's PostgreSQL store). */
const STORE_COMMANDS = new Set([...RUN_COMMANDS, ...TRUST_COMMANDS, "migrate", "import", "attest", "verify-receipts", "log", "verify-log"]);

/** Commands that read or write the gate home, so take `--home DIR`. */
const HOME_COMMANDS = new Set([
  ...RUN_COMMANDS,
  ...TRUST_COMMANDS,
  "log",
  "verify-log",
  "verify-receipts",
  "attest",
  "install",
  "uninstall",
  "gc",
]);

export { VERSION };

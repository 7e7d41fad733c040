import type { Command, CommanderError } from "commander";
import { editDistance } from "../input/closest-choice.js";
import { holdsKeyText } from "../trust/key-text.js";

/**
 * Commander's parse error as one line a person can act on. A misspelt option
 * (`--decison`) is named with the option it is closest to, even when
 * commander first complains about the required option it hid; too many
 * arguments names the extras and how to pass a value with spaces.
 */
export function describeUsageError(error: CommanderError, program: Command, argv: readonly string[]): string {
  const base = hideKeys(error.message.replace(/^error: /, "")).replace(/\s*\n\s*/g, " ");
  const command = findCommand(program, argv);
  const misspelt = command ? misspeltOption(command, argv) : undefined;
  // The command's own help when the call names one (`twinlock trust pin --help`), else the list.
  const named = command ? [command.parent?.parent ? command.parent.name() : undefined, command.name()].filter(Boolean).join(" ") : "";
  const help = named ? `run \`twinlock ${named} --help\`` : "run `twinlock --help`";
  // A key pasted as an argument (`"$(cat alice.key)"` begins with dashes, so it reads as an option) is never echoed:
  // the message would put a private key on the terminal and into every log of it.
  if (argv.some(holdsKeyText))
    return `an argument is a PEM key block (not shown here); give a key as a file (--key FILE), and a public key as its one line from NAME.pub (ed25519:…); ${help}`;
  if (misspelt) return `unknown option ${misspelt.given}${misspelt.closest ? ` (did you mean ${misspelt.closest}?)` : ""}; ${help}`;
  const excess = /^too many arguments for '([^']+)'\. Expected (\d+) arguments? but got (\d+)\.$/.exec(base);
  if (excess && command) {
    const extra = positionals(command, argv).slice(Number(excess[2]));
    return `too many arguments for '${excess[1]}': it takes ${excess[2]}, and ${extra.map((a) => JSON.stringify(a)).join(", ")} ${extra.length === 1 ? "is" : "are"} left over; quote an option value with spaces, and write durations like 4h; ${help}`;
  }
  return `${base}; ${help}`;
}

/** `text` with every PEM key block in it replaced by a note that one was there. */
function hideKeys(text: string): string {
  return text.replace(/-----BEGIN [A-Z0-9 ]*KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*KEY-----|$)/g, "(a PEM key block, not shown)");
}

/** The (sub)command argv names: `trust pin` as well as `admit`. */
function findCommand(program: Command, argv: readonly string[]): Command | undefined {
  let current: Command | undefined = program.commands.find((c) => c.name() === argv[0]);
  if (current && current.commands.length > 0) current = current.commands.find((c) => c.name() === argv[1]) ?? current;
  return current;
}

function misspeltOption(command: Command, argv: readonly string[]): { given: string; closest: string | undefined } | undefined {
  const known = new Set<string>(["--help", ...command.options.map((o) => o.long).filter((l): l is string => l !== undefined)]);
  for (const token of argv) {
    if (!token.startsWith("--") || token === "--") continue;
    const given = token.split("=")[0] as string;
    if (known.has(given)) continue;
    let closest: string | undefined;
    let best = 3;
    for (const k of known) {
      const d = editDistance(given, k);
      if (d < best) {
        best = d;
        closest = k;
      }
    }
    return { given, closest };
  }
  return undefined;
}

/** The plain arguments after the command name, without options and their values. */
function positionals(command: Command, argv: readonly string[]): string[] {
  const takesValue = new Set(command.options.filter((o) => o.required || o.optional).map((o) => o.long));
  const depth = command.parent?.parent ? 2 : 1;
  const out: string[] = [];
  for (let i = depth; i < argv.length; i++) {
    const token = argv[i] as string;
    if (token.startsWith("--")) {
      if (!token.includes("=") && takesValue.has(token)) i++;
      continue;
    }
    out.push(token);
  }
  return out;
}

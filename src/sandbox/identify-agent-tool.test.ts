import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { PACKAGE_ROOT } from "../package-root.js";
import { chooseSandbox } from "./exec-sandbox.js";
import { identifyAgentTool } from "./identify-agent-tool.js";

const scratch = realpathSync(mkdtempSync(path.join(os.tmpdir(), "twinlock-identify-")));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A fresh folder for one case's programs, first on its PATH. */
function bin(): { dir: string; env: NodeJS.ProcessEnv } {
  const dir = mkdtempSync(path.join(scratch, "bin-"));
  return { dir, env: { PATH: `${dir}:${path.dirname(process.execPath)}:/usr/bin:/bin` } };
}

/** A program that leaves `ran` behind if anything ever starts it. */
function program(file: string, firstLine: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${firstLine}\nrequire("fs").writeFileSync(${JSON.stringify(`${file}.ran`)}, "")\n`);
  chmodSync(file, 0o755);
  return file;
}

/** Codex's package, installed as npm does: the script in the package, a link to it in `.bin`. */
function codexPackage(): string {
  const root = mkdtempSync(path.join(scratch, "pkg-"));
  const script = program(path.join(root, "node_modules", "@openai", "codex", "bin", "codex.js"), "#!/usr/bin/env node");
  mkdirSync(path.join(root, "node_modules", ".bin"));
  symlinkSync("../@openai/codex/bin/codex.js", path.join(root, "node_modules", ".bin", "codex"));
  return script;
}

describe("identifyAgentTool", () => {
  it("sees a shell script named claude that runs another program as no tool, without running it", () => {
    const b = bin();
    const claude = path.join(b.dir, "claude");
    writeFileSync(claude, `#!/bin/sh\ntouch ${claude}.ran\nexec /usr/bin/python3 "$@"\n`);
    chmodSync(claude, 0o755);
    const id = identifyAgentTool(["claude", "-p", "x"], { env: b.env, cwd: scratch });
    expect(id.tool).toBeUndefined();
    expect(id.what).toBe(`a script run by /bin/sh: ${claude}`);
    expect(existsSync(`${claude}.ran`)).toBe(false);
  });

  it("follows a link codex -> /bin/sh to the shell it is", () => {
    const b = bin();
    symlinkSync("/bin/sh", path.join(b.dir, "codex"));
    const id = identifyAgentTool(["codex", "exec", "x"], { env: b.env, cwd: scratch });
    expect(id.tool).toBeUndefined();
    expect(id.what).toBe(`the binary ${realpathSync("/bin/sh")}, which is no tool's`);
  });

  it("sees through env to the program it starts, on the PATH env gives it", () => {
    const script = codexPackage();
    const b = bin();
    symlinkSync(script, path.join(b.dir, "codex"));
    expect(identifyAgentTool(["env", "codex", "exec"], { env: b.env, cwd: scratch })).toMatchObject({ tool: "codex", argsAt: 2 });
    expect(identifyAgentTool(["env", "-u", "HOME", "A=1", "--", "codex", "exec"], { env: b.env, cwd: scratch })).toMatchObject({
      tool: "codex",
      argsAt: 6,
    });
    // env with another PATH finds another program; env -S is not followed.
    expect(identifyAgentTool(["env", "PATH=/usr/bin:/bin", "codex"], { env: b.env, cwd: scratch }).tool).toBeUndefined();
    expect(identifyAgentTool(["env", "-S", "codex exec"], { env: b.env, cwd: scratch }).tool).toBeUndefined();
    // env of a shell wrapper named claude is that wrapper.
    writeFileSync(path.join(b.dir, "claude"), "#!/bin/sh\nexec sh\n");
    chmodSync(path.join(b.dir, "claude"), 0o755);
    expect(identifyAgentTool(["env", "claude"], { env: b.env, cwd: scratch }).tool).toBeUndefined();
  });

  it("names a node script by the tool's npm package that holds its real path, through a link or node, and no other", () => {
    const script = codexPackage();
    const link = path.join(path.dirname(path.dirname(path.dirname(path.dirname(script)))), ".bin", "codex");
    const b = bin();
    expect(identifyAgentTool([link, "exec"], { env: b.env, cwd: scratch })).toMatchObject({ tool: "codex", argsAt: 1 });
    expect(identifyAgentTool(["node", "--no-warnings", script, "exec"], { env: b.env, cwd: scratch })).toMatchObject({
      tool: "codex",
      argsAt: 3,
    });
    // A node script named like the tool, in no package of it, is no tool.
    const loose = program(path.join(b.dir, "codex.js"), "#!/usr/bin/env node");
    expect(identifyAgentTool(["node", loose], { env: b.env, cwd: scratch }).tool).toBeUndefined();
    symlinkSync(loose, path.join(b.dir, "gemini"));
    expect(identifyAgentTool(["gemini"], { env: b.env, cwd: scratch }).what).toMatch(/^a node script in no tool's npm package/);
    expect(identifyAgentTool(["node", "-e", "1"], { env: b.env, cwd: scratch }).tool).toBeUndefined();
  });

  it("names a package runner's tool by its scoped npm name only: a bare codex or gemini is some other package", () => {
    const where = { env: bin().env, cwd: scratch };
    expect(identifyAgentTool(["npx", "-y", "@openai/codex@0.169.0", "exec"], where)).toMatchObject({ tool: "codex", argsAt: 3 });
    expect(identifyAgentTool(["npx", "--package=@google/gemini-cli", "gemini"], where).tool).toBe("gemini");
    expect(identifyAgentTool(["npx", "gemini@0.61.0"], where).tool).toBeUndefined();
    expect(identifyAgentTool(["npx", "codex"], where).tool).toBeUndefined();
  });

  it("reads no more than the first 256 bytes: a #! line longer than that is no tool's, and a FIFO named claude is not waited on", () => {
    const b = bin();
    const long = path.join(b.dir, "node_modules", "@openai", "codex", "bin", "codex.js");
    mkdirSync(path.dirname(long), { recursive: true });
    writeFileSync(long, `#!/usr/bin/env ${" ".repeat(300)}node\n`);
    chmodSync(long, 0o755);
    expect(identifyAgentTool([long], { env: b.env, cwd: scratch }).what).toMatch(/longer than 256 bytes/);
    const fifo = path.join(b.dir, "claude");
    expect(spawnSync("mkfifo", ["-m", "755", fifo]).status).toBe(0);
    expect(identifyAgentTool(["claude"], { env: b.env, cwd: scratch }).tool).toBeUndefined();
  });

  it("says a program that is not there is not on PATH", () => {
    expect(identifyAgentTool(["claude"], { env: { PATH: scratch }, cwd: scratch }).what).toBe(
      "claude, which is not an executable file on PATH",
    );
  });

  const clis = path.join(PACKAGE_ROOT, ".agent-clis", "node_modules", ".bin");
  it.skipIf(!existsSync(clis))(`names the real pinned CLIs in .agent-clis${existsSync(clis) ? "" : " (skipped: not installed)"}`, () => {
    const where = { env: { PATH: `${clis}:${path.dirname(process.execPath)}:/usr/bin:/bin` }, cwd: scratch };
    for (const tool of ["claude", "codex", "gemini"] as const) {
      if (!existsSync(path.join(clis, tool))) continue;
      expect(identifyAgentTool([tool, "-p", "x"], where), tool).toMatchObject({ tool, argsAt: 1 });
      expect(identifyAgentTool([path.join(clis, tool)], where).tool, tool).toBe(tool);
    }
    // The native binaries the packages start, by their own paths.
    const modules = path.dirname(clis);
    for (const [binary, tool] of [
      ["@anthropic-ai/claude-code-linux-x64/claude", "claude"],
      ["@openai/codex-linux-x64/vendor/x86_64-unknown-linux-musl/bin/codex", "codex"],
    ] as const)
      if (existsSync(path.join(modules, binary))) expect(identifyAgentTool([path.join(modules, binary)], where).tool, binary).toBe(tool);
  });

  it("never names as a tool a program named claude, codex or gemini outside the tools' packages that is no ELF binary, whatever its bytes", () => {
    const b = bin();
    fc.assert(
      fc.property(
        fc.constantFrom("claude", "codex", "gemini"),
        fc.constantFrom("", "#!/bin/sh\n", "#!/usr/bin/env node\n", "#!/usr/bin/env -S node --no-warnings\n", `#!${process.execPath}\n`),
        fc.uint8Array({ maxLength: 400 }),
        (name, start, rest) => {
          const file = path.join(b.dir, name);
          const bytes = Buffer.concat([Buffer.from(start), rest]);
          writeFileSync(file, bytes);
          chmodSync(file, 0o755);
          if (bytes.subarray(0, 4).toString("latin1") !== "\x7fELF")
            expect(identifyAgentTool([name], { env: b.env, cwd: scratch }).tool).toBeUndefined();
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("chooseSandbox with a program that is no agent tool", () => {
  it("refuses a shell wrapper named claude in one line naming the tools, how to start one, --sandbox and --hook-only", () => {
    const b = bin();
    writeFileSync(path.join(b.dir, "claude"), "#!/bin/sh\nexec sh\n");
    chmodSync(path.join(b.dir, "claude"), 0o755);
    const present = () => ({ ok: true as const, path: "/usr/bin/bwrap" });
    let message = "";
    try {
      chooseSandbox(["claude", "-p", "x"], {}, present, { env: b.env, cwd: scratch });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).not.toContain("\n");
    expect(message).toBe(
      `exec cannot tell which agent tool it would run: claude is named like claude but is a script run by /bin/sh: ${b.dir}/claude; exec confines Claude Code, Codex CLI and Gemini CLI, started by their own program (claude, codex, gemini on PATH; a release binary; node …/node_modules/@openai/codex/bin/codex.js; npx @openai/codex): start the tool's own program directly, or pass --sandbox to run this command confined to the admitted targets, or --hook-only to run it held by the hook alone`,
    );
    expect(chooseSandbox(["claude"], { sandbox: true }, present, { env: b.env, cwd: scratch })).toMatchObject({
      kind: "bubblewrap",
      tool: undefined,
    });
    expect(chooseSandbox(["claude"], { hookOnly: true }, present, { env: b.env, cwd: scratch })).toMatchObject({ kind: "none" });
  });
});

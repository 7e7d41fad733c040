import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { BINDING_FORMAT, type SessionBinding } from "../home/session-binding.js";
import { isWithin } from "../input/resolve-real-path.js";
import { AGENT_CONTRACTS, readHookInput } from "./agent-contracts.js";
import { decideToolCall } from "./decide-tool-call.js";

const root = mkdtempSync(path.join(os.tmpdir(), "twinlock-decide-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const project = path.join(root, "project");
const checkout = path.join(root, "checkout");
mkdirSync(path.join(project, "cart"), { recursive: true });
mkdirSync(checkout);
const outside = path.join(root, "outside");
mkdirSync(outside);

const binding: SessionBinding = {
  format: BINDING_FORMAT,
  kind: "executor",
  store: "folder",
  run_id: "run_0123456789abcdef",
  run_file: path.join(project, "run.json"),
  executor: "MD-30",
  planner: "MD-29",
  handoff_hash: `sha256:${"ab".repeat(32)}`,
  revision: 1,
  actions: ["A1"],
  targets: [path.join(project, "cart", "cache.go")],
  project_dir: project,
  checkout_dir: checkout,
  manifest: [],
  consent_expires_at: null,
  checkpoint: { seq: 5, head: `sha256:${"cd".repeat(32)}` },
  handoff_dir: null,
  process: { pid: 1, start: null, boot_id: null },
  secret_sha256: "0".repeat(64),
  created_at: new Date(0).toISOString(),
};

const write = (p: string, cwd: string | null = project) => ({ kind: "write" as const, tool: "Write", paths: [p], cwd });

describe("decideToolCall", () => {
  it("passes a read without any binding", () => {
    expect(decideToolCall({ kind: "read", tool: "Read" }, { unbound: "no session" })).toEqual({ pass: true });
  });

  it("denies every write, shell and MCP call when no session is bound, naming why", () => {
    for (const call of [
      write("cart/cache.go"),
      { kind: "shell" as const, tool: "Bash", cwd: project, command: null },
      { kind: "external" as const, tool: "mcp__x__y" },
    ]) {
      const d = decideToolCall(call, { unbound: "no twinlock session is bound" });
      expect(d.pass).toBe(false);
      expect(d.pass ? "" : d.reason).toContain("no twinlock session is bound");
    }
  });

  it("passes a bound write to an admitted target, relative or absolute, and into the checkout", () => {
    expect(decideToolCall(write("cart/cache.go"), binding).pass).toBe(true);
    expect(decideToolCall(write(path.join(project, "cart", "cache.go"), null), binding).pass).toBe(true);
    expect(decideToolCall(write(path.join(checkout, "notes.md")), binding).pass).toBe(true);
  });

  it("denies a bound write outside the plan's targets, through .. and through a symbolic link", () => {
    expect(decideToolCall(write("cart/other.go"), binding).pass).toBe(false);
    expect(decideToolCall(write("cart/../../outside/x"), binding).pass).toBe(false);
    symlinkSync(outside, path.join(project, "cart", "link"));
    expect(decideToolCall(write("cart/link/cache.go"), binding).pass).toBe(false);
  });

  it("denies a write that names no file, and a tool it does not know even when bound", () => {
    expect(decideToolCall({ kind: "write", tool: "apply_patch", paths: [], cwd: project }, binding).pass).toBe(false);
    expect(decideToolCall({ kind: "unknown", tool: "write" }, binding).pass).toBe(false);
  });

  it("passes a bound shell call inside the project and denies one run elsewhere", () => {
    expect(decideToolCall({ kind: "shell", tool: "Bash", cwd: project, command: null }, binding).pass).toBe(true);
    expect(decideToolCall({ kind: "shell", tool: "Bash", cwd: outside, command: null }, binding).pass).toBe(false);
  });

  it("denies any path outside the allowed roots (property)", () => {
    const segment = fc.stringMatching(/^[a-zA-Z0-9._-]{1,8}$/).filter((s) => s !== "." && s !== "..");
    const part = fc.oneof(segment, fc.constant(".."), fc.constant("."));
    fc.assert(
      fc.property(fc.array(part, { minLength: 1, maxLength: 8 }), fc.boolean(), (parts, absolute) => {
        const p = absolute ? path.join("/", ...parts) : parts.join("/");
        const resolved = path.resolve(project, p);
        const inside = [...binding.targets, checkout].some((r) => isWithin(resolved, r));
        const d = decideToolCall(write(p), binding);
        // Only the link made above resolves elsewhere, and it points outside: it can only turn a pass into a deny.
        if (!inside) expect(d.pass).toBe(false);
      }),
      { numRuns: Number(process.env.FUZZ_RUNS ?? 300) },
    );
  });
});

describe("the agent contracts", () => {
  it("match tool names exactly: casing and spacing tricks are unknown tools", () => {
    for (const name of ["write", "Write ", " Write", "WRITE", "bash", "Read ", "read_file "]) {
      const input = readHookInput({ tool_name: name, tool_input: { file_path: "x" } });
      if ("problem" in input) throw new Error(input.problem);
      expect(AGENT_CONTRACTS.claude.classify(input).kind).toBe("unknown");
    }
  });

  it("read the files a Codex apply_patch touches, and none from an envelope naming none", () => {
    const call = (command: string) => {
      const input = readHookInput({ tool_name: "apply_patch", tool_input: { command } });
      if ("problem" in input) throw new Error(input.problem);
      return AGENT_CONTRACTS.codex.classify(input);
    };
    expect(
      call("*** Begin Patch\n*** Update File: a.go\n*** Move to: b.go\n@@\n-x\n+y\n*** Add File: c.go\n+z\n*** End Patch"),
    ).toMatchObject({
      kind: "write",
      paths: ["a.go", "b.go", "c.go"],
    });
    expect(call("rm -rf /")).toMatchObject({ kind: "write", paths: [] });
  });

  const codexPatch = (command: string) => {
    const input = readHookInput({ tool_name: "apply_patch", tool_input: { command }, cwd: project });
    if ("problem" in input) throw new Error(input.problem);
    return AGENT_CONTRACTS.codex.classify(input);
  };

  it("deny a Codex header with white space around it, which Rust's trim and JavaScript's read differently (U+0085, U+FEFF, a trailing space on Move to)", () => {
    const envelopes = [
      "*** Begin Patch\n*** Add File: cart/cache.go\n+ok\n\u0085*** Add File: /etc/cron.d/evil\n+x\n*** End Patch\n",
      "*** Begin Patch\n*** Add File: cart/cache.go\ufeff\n+ok\n*** End Patch\n",
      "*** Begin Patch\n*** Update File: cart/cache.go\n*** Move to: cart/cache.go \n@@\n-a\n+b\n*** End Patch\n",
      "*** Begin Patch\n  *** Move to: /etc/passwd\n*** End Patch\n",
      ...["\u00a0", "\u2003", "\u3000", "\t", "\v", "\f"].map(
        (space) => `*** Begin Patch\n${space}*** Delete File: cart/cache.go\n*** End Patch`,
      ),
    ];
    for (const envelope of envelopes) {
      const call = codexPatch(envelope);
      expect(call.kind, JSON.stringify(envelope)).toBe("unreadable");
      expect(decideToolCall(call, binding)).toMatchObject({ pass: false, reason: expect.stringContaining("has white space around it") });
    }
  });

  it("deny a patch given in two fields at once (one could be judged while the other is applied), and judge the patch Codex's shell tool runs", () => {
    const input = readHookInput({
      tool_name: "apply_patch",
      tool_input: {
        command: "*** Begin Patch\n*** Add File: cart/cache.go\n+ok\n*** End Patch\n",
        input: "*** Begin Patch\n*** Add File: /etc/evil\n+x\n*** End Patch\n",
      },
      cwd: project,
    });
    if ("problem" in input) throw new Error(input.problem);
    expect(AGENT_CONTRACTS.codex.classify(input)).toMatchObject({ kind: "unreadable" });
    const shell = (command: unknown) => {
      const i = readHookInput({ tool_name: "shell", tool_input: { command }, cwd: project });
      if ("problem" in i) throw new Error(i.problem);
      return AGENT_CONTRACTS.codex.classify(i);
    };
    const outsidePatch = `*** Begin Patch\n*** Add File: ${path.join(outside, "x")}\n+x\n*** End Patch\n`;
    expect(decideToolCall(shell(["apply_patch", outsidePatch]), binding).pass).toBe(false);
    expect(shell(["applypatch", "*** Begin Patch\n*** Add File: cart/cache.go\n+ok\n*** End Patch\n"])).toMatchObject({
      kind: "write",
      paths: ["cart/cache.go"],
    });
    expect(shell(["apply_patch", outsidePatch, "extra"])).toMatchObject({ kind: "unreadable" });
  });

  it("judge Gemini's save_memory as a write outside the project (the user's memory file), and Gemini's and Cursor's relative folders against the session's", () => {
    const gemini = (tool: string, toolInput: Record<string, unknown>, cwd = project) => {
      const i = readHookInput({ tool_name: tool, tool_input: toolInput, cwd });
      if ("problem" in i) throw new Error(i.problem);
      return AGENT_CONTRACTS.gemini.classify(i);
    };
    expect(decideToolCall(gemini("save_memory", { fact: "always run deploy.sh" }), binding).pass).toBe(false);
    expect(decideToolCall(gemini("run_shell_command", { command: "ls", directory: outside }), binding).pass).toBe(false);
    expect(decideToolCall(gemini("run_shell_command", { command: "ls", dir_path: "../outside" }), binding).pass).toBe(false);
    expect(decideToolCall(gemini("run_shell_command", { command: "ls", dir_path: "cart" }), binding).pass).toBe(true);
    const cursor = readHookInput({ tool_name: "Shell", tool_input: { command: "ls", cwd: "../outside" }, cwd: project });
    if ("problem" in cursor) throw new Error(cursor.problem);
    expect(decideToolCall(AGENT_CONTRACTS.cursor.classify(cursor), binding).pass).toBe(false);
  });

  it("deny a Codex patch whose header path holds a lone CR, U+2028 or another control or separator, which a regular expression's . skips", () => {
    for (const evil of [
      "/etc/cron.d/x\ry",
      "/etc/cron.d/x\u2028y",
      "/etc/cron.d/x\u2029y",
      "/etc/x\u0000y",
      "/etc/x\u200ey",
      "/etc/x\u0085y",
    ]) {
      const call = codexPatch(`*** Begin Patch\n*** Add File: cart/cache.go\n+ok\n*** Add File: ${evil}\n+x\n*** End Patch\n`);
      expect(call.kind, JSON.stringify(evil)).toBe("unreadable");
      expect(decideToolCall(call, binding).pass).toBe(false);
    }
  });

  it("deny a Codex patch with a line that starts like a header but is none Codex reads", () => {
    for (const line of ["*** Add File:", "***Add File: x", "*** Add file: /etc/passwd", "*** Rename File: /etc/passwd"]) {
      const call = codexPatch(`*** Begin Patch\n*** Add File: cart/cache.go\n+ok\n${line}\n*** End Patch\n`);
      expect(call.kind, line).toBe("unreadable");
      expect(decideToolCall(call, binding).pass).toBe(false);
    }
  });

  it("take a Codex header's path as Codex does, spaces after the marker included: ' cart/cache.go' is not the target", () => {
    const call = codexPatch("*** Begin Patch\n*** Add File:  cart/cache.go\n+x\n*** End Patch\n");
    expect(call).toMatchObject({ kind: "write", paths: [" cart/cache.go"] });
    expect(decideToolCall(call, binding).pass).toBe(false);
  });

  it("deny a path starting with ~, which Codex and shells expand to a home folder, in writes and as a command's folder", () => {
    for (const p of ["~/.bashrc", "~", "~root/.ssh/authorized_keys"]) {
      const d = decideToolCall(write(p), binding);
      expect(d.pass, p).toBe(false);
      expect(d.pass ? "" : d.reason).toContain("starts with ~");
    }
    expect(decideToolCall(codexPatch("*** Begin Patch\n*** Add File: ~/.bashrc.d/zz.sh\n+x\n*** End Patch\n"), binding).pass).toBe(false);
    expect(decideToolCall({ kind: "shell", tool: "shell", cwd: "~", command: null }, binding).pass).toBe(false);
  });

  it("run a Codex shell or exec_command in its workdir: one outside the project is denied", () => {
    const shell = (tool: string, workdir: string) => {
      const input = readHookInput({ tool_name: tool, tool_input: { command: ["ls"], workdir }, cwd: project });
      if ("problem" in input) throw new Error(input.problem);
      return AGENT_CONTRACTS.codex.classify(input);
    };
    for (const tool of ["shell", "exec_command"]) {
      expect(decideToolCall(shell(tool, outside), binding).pass, tool).toBe(false);
      expect(decideToolCall(shell(tool, "../outside"), binding).pass, tool).toBe(false);
      expect(decideToolCall(shell(tool, "cart"), binding).pass, tool).toBe(true);
    }
  });

  it("refuse a tool_input sent as a JSON string that gives a key twice, as it refuses the input around it", () => {
    expect(readHookInput({ tool_name: "Write", tool_input: '{"file_path":"cart/cache.go","file_path":"/etc/passwd"}' })).toHaveProperty(
      "problem",
      "the hook input's tool_input has the key file_path twice",
    );
  });

  it("refuse hook input that is not an object or names no tool", () => {
    expect(readHookInput([])).toHaveProperty("problem");
    expect(readHookInput({ tool_input: {} })).toHaveProperty("problem");
    expect(readHookInput({ tool_name: "Write", tool_input: "not json" })).toHaveProperty("problem");
  });
});

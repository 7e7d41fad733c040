import { describe, expect, it } from "vitest";
import { agentEnvironment, isAgentVariable, NEVER_PASSED } from "./agent-environment.js";

const invoker: NodeJS.ProcessEnv = {
  PATH: "/usr/local/bin:/usr/bin::.:relative/bin:/work/agent-work/handoff/bin",
  HOME: "/home/alice",
  TERM: "xterm-256color",
  LANG: "en_GB.UTF-8",
  LC_ALL: "en_GB.UTF-8",
  TMPDIR: "/tmp",
  ANTHROPIC_API_KEY: "sk-ant",
  OPENAI_API_KEY: "sk-openai",
  CODEX_HOME: "/home/alice/.codex",
  GEMINI_API_KEY: "g",
  GOOGLE_CLOUD_PROJECT: "p",
  CLAUDE_CONFIG_DIR: "/home/alice/.claude",
  TWINLOCK_KEY: "/home/alice/keys/alice.key",
  TWINLOCK_ACTOR: "alice",
  TWINLOCK_STORE: "postgres://gate:hunter2@db/twinlock",
  TWINLOCK_SESSION: "forged",
  TWINLOCK_RUN: "/elsewhere/run.json",
  NODE_OPTIONS: "--require /tmp/evil.cjs",
  AWS_SECRET_ACCESS_KEY: "aws",
  GITHUB_TOKEN: "ghp",
  LD_PRELOAD: "/tmp/x.so",
  GIT_CONFIG_GLOBAL: "/tmp/evil-gitconfig",
};

describe("the agent's environment", () => {
  it("passes the allow-listed variables: PATH, HOME, terminal, locale, TMPDIR and the agent tools' own", () => {
    const env = agentEnvironment(invoker, {});
    expect(Object.keys(env).sort()).toEqual(
      [
        "ANTHROPIC_API_KEY",
        "CLAUDE_CONFIG_DIR",
        "CODEX_HOME",
        "GEMINI_API_KEY",
        "GOOGLE_CLOUD_PROJECT",
        "HOME",
        "LANG",
        "LC_ALL",
        "OPENAI_API_KEY",
        "PATH",
        "TERM",
        "TMPDIR",
      ].sort(),
    );
  });

  it("never passes the reviewer's key, the actor, the store URL with its password, NODE_OPTIONS or a forged session", () => {
    const env = agentEnvironment(invoker, { TWINLOCK_SESSION: "real", TWINLOCK_RUN: "/work/run.json" }, { extra: [...NEVER_PASSED] });
    for (const name of NEVER_PASSED) expect(env[name], name).toBeUndefined();
    expect(JSON.stringify(env)).not.toContain("hunter2");
    expect(env.TWINLOCK_SESSION).toBe("real");
    expect(env.TWINLOCK_RUN).toBe("/work/run.json");
    expect(env.LD_PRELOAD).toBeUndefined();
    expect(env.GIT_CONFIG_GLOBAL).toBeUndefined();
  });

  it("passes a variable the invoker names with --pass-env, but never a TWINLOCK_ one", () => {
    const env = agentEnvironment(invoker, {}, { extra: ["AWS_SECRET_ACCESS_KEY", "TWINLOCK_KEY", "TWINLOCK_ACTOR"] });
    expect(env.AWS_SECRET_ACCESS_KEY).toBe("aws");
    expect(env.TWINLOCK_KEY).toBeUndefined();
    expect(env.TWINLOCK_ACTOR).toBeUndefined();
  });

  it("keeps only absolute PATH folders the session cannot write", () => {
    const env = agentEnvironment(invoker, {}, { writable: ["/work/agent-work/handoff"] });
    expect(env.PATH).toBe("/usr/local/bin:/usr/bin");
  });

  it("is one table: every TWINLOCK_ variable and NODE_OPTIONS are outside it", () => {
    for (const name of ["TWINLOCK_HOME", "TWINLOCK_KEY", "NODE_OPTIONS", "NODE_PATH", "BASH_ENV", "ENV", "PROMPT_COMMAND"])
      expect(isAgentVariable(name), name).toBe(false);
    expect(isAgentVariable("ANTHROPIC_BASE_URL")).toBe(true);
  });
});

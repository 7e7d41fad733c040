/**
 * The gate home's refusals carry codes of their own, and every front end
 * answers one refusal with the same code: the server's JSON body, the MCP
 * tool's error, and the CLI's `--json` error document.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ERROR_CODES } from "../errors/error-codes.js";
import { createAgentToken } from "../server/agent-tokens.js";
import { call, jsonOf, PLANNER, removeServerWorlds, type ServerWorld, serverWorld } from "../test-support/gate-server-fixture.js";
import { mcpClientFor } from "../test-support/mcp-client.js";
import { runCliJson } from "../test-support/run-cli.js";
import { withCheckpointLock } from "./run-checkpoints.js";

afterEach(() => removeServerWorlds());

/**
 * MCP's answer to a freeze: [is an error, the code of its structured content, the code its text starts with]. A
 * session the endpoint refuses to open (it reads the run first) is answered over HTTP with the problem body instead.
 */
async function submitOverMcp(w: ServerWorld, token: string): Promise<[boolean, string | undefined, string | undefined]> {
  let client: Awaited<ReturnType<typeof mcpClientFor>>;
  try {
    client = await mcpClientFor(w, token);
  } catch (error) {
    const code = /"code":"([A-Z_]+)"/.exec(String((error as Error).message))?.[1];
    return [true, code, code];
  }
  const r = await client.callTool({ name: "twinlock_submit_handoff", arguments: { planner: PLANNER, handoff_dir: w.handoff } });
  await client.close();
  return [
    r.isError === true,
    (r.structuredContent as { code?: string }).code,
    (r.content as Array<{ text: string }>)[0]?.text.split(":")[0],
  ];
}

/** The code each front end answers a freeze of the world's handoff with: [HTTP status and code, MCP code, CLI exit and code]. */
async function freezeEverywhere(w: ServerWorld) {
  const t = await createAgentToken(w.home, { agent: "claude", runId: w.runId });
  const http = await jsonOf(
    await call(w, `/api/runs/${w.runId}/pairs/${PLANNER}/freeze`, { token: t.token, json: { handoff_dir: w.handoff } }),
  );
  const mcp = await submitOverMcp(w, t.token);
  const cli = await runCliJson<{ ok: boolean; error: { kind: string; code: string } }>([
    "freeze-pair-handoff",
    w.runFile,
    PLANNER,
    "--handoff",
    w.handoff,
    "--home",
    w.home.dir,
  ]);
  return {
    http: [http.status, http.body.code],
    mcp,
    cli: [cli.code, cli.json.ok, cli.json.error.kind, cli.json.error.code],
  };
}

describe("the gate home's refusals reach every front end with the same code", () => {
  it("answers a freeze over the home's quota of frozen bytes with QUOTA_EXCEEDED over HTTP (409), MCP and the CLI's --json (exit 1)", async () => {
    const w = await serverWorld();
    writeFileSync(path.join(w.home.dir, "settings.json"), JSON.stringify({ format: "twinlock-home-settings/1", frozen_bytes_per_run: 1 }));
    expect(await freezeEverywhere(w)).toEqual({
      http: [409, "QUOTA_EXCEEDED"],
      mcp: [true, "QUOTA_EXCEEDED", "QUOTA_EXCEEDED"],
      cli: [1, false, "refused", "QUOTA_EXCEEDED"],
    });
    expect(ERROR_CODES.QUOTA_EXCEEDED).toBe("refused");
    expect((await w.store.read(w.runFile)).state.workflows[PLANNER]?.handoff).toBeNull();
  });

  it("answers a freeze of a run whose checkpoint in the gate home is damaged with HOME_DAMAGED over HTTP (409), MCP and the CLI's --json (exit 1)", async () => {
    const w = await serverWorld();
    writeFileSync(path.join(w.home.dir, "runs", `${w.runId}.json`), "{}");
    expect(await freezeEverywhere(w)).toEqual({
      http: [409, "HOME_DAMAGED"],
      mcp: [true, "HOME_DAMAGED", "HOME_DAMAGED"],
      cli: [1, false, "integrity", "HOME_DAMAGED"],
    });
    expect(ERROR_CODES.HOME_DAMAGED).toBe("integrity");
  });

  it("answers a freeze while another writer holds the run's lock past the wait with LOCKED over HTTP (503), MCP and the CLI's --json (exit 1)", async () => {
    const w = await serverWorld();
    const before = process.env.TWINLOCK_LOCK_WAIT_MS;
    process.env.TWINLOCK_LOCK_WAIT_MS = "50";
    let release = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    let entered = () => {};
    const holding = new Promise<void>((r) => {
      entered = r;
    });
    const holder = withCheckpointLock(w.home, w.runId, async () => {
      entered();
      await held;
    });
    try {
      await holding;
      expect(await freezeEverywhere(w)).toEqual({
        http: [503, "LOCKED"],
        mcp: [true, "LOCKED", "LOCKED"],
        cli: [1, false, "conflict", "LOCKED"],
      });
    } finally {
      release();
      await holder;
      if (before === undefined) delete process.env.TWINLOCK_LOCK_WAIT_MS;
      else process.env.TWINLOCK_LOCK_WAIT_MS = before;
    }
    expect(ERROR_CODES.LOCKED).toBe("unavailable");
    expect((await w.store.read(w.runFile)).state.workflows[PLANNER]?.handoff).toBeNull();
  });
});

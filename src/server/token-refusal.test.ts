/**
 * A token refusal is data (its code and what the token lacked); the server
 * and MCP word it without a command line, saying what is missing and who can
 * grant it, and only the CLI names `twinlock token create`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { wordTokenRefusalForCli } from "../cli/word-token-refusal.js";
import { call, jsonOf, PLANNER, removeServerWorlds, serverWorld } from "../test-support/gate-server-fixture.js";
import { mcpClientFor } from "../test-support/mcp-client.js";
import { createAgentToken, revokeAgentToken } from "./agent-tokens.js";
import { apiPaths } from "./api-paths.js";
import { isTokenRefusal, type TokenRefusal, tokenRefusalError, wordTokenRefusal } from "./token-refusal.js";

afterEach(() => removeServerWorlds());

/** A command line of the CLI's, in any words a front end other than the CLI sends. */
const COMMAND = /twinlock [a-z]|--[a-z]/;

describe("the server's token refusals", () => {
  it("carry the code and what was missing (token, expiry, scope, run, pair), and no twinlock command", async () => {
    const day = 86_400_000;
    let clock = Date.now();
    const w = await serverWorld({ now: () => new Date(clock) });
    const full = await createAgentToken(w.home, { agent: "claude", runId: w.runId }, new Date(clock));
    const statusOnly = await createAgentToken(w.home, { agent: "claude", runId: w.runId, scopes: ["status"] }, new Date(clock));
    const onePair = await createAgentToken(w.home, { agent: "claude", runId: w.runId, planner: PLANNER }, new Date(clock));
    const revoked = await createAgentToken(w.home, { agent: "claude", runId: w.runId }, new Date(clock));
    await revokeAgentToken(w.home, revoked.record.id);
    const answers: Array<[string, number, Record<string, unknown>]> = [];
    const ask = async (label: string, url: string, c: Parameters<typeof call>[2]) => {
      const r = await jsonOf(await call(w, url, c));
      answers.push([label, r.status, r.body]);
    };
    await ask("no bearer", apiPaths.plan(w.runId, PLANNER), { headers: { authorization: "Basic x" } });
    await ask("malformed", apiPaths.plan(w.runId, PLANNER), { token: "not-a-token" });
    await ask("revoked", apiPaths.plan(w.runId, PLANNER), { token: revoked.token });
    await ask("scope", apiPaths.freeze(w.runId, PLANNER), { token: statusOnly.token, json: { handoff_dir: w.handoff } });
    await ask("run", apiPaths.plan("run_0000000000000000", PLANNER), { token: full.token });
    await ask("pair", apiPaths.plan(w.runId, "MD-99"), { token: onePair.token });
    clock += 2 * day;
    await ask("expired", apiPaths.plan(w.runId, PLANNER), { token: full.token });
    expect(answers.map(([label, status, b]) => [label, status, b.code, (b.details as Record<string, unknown>).missing])).toEqual([
      ["no bearer", 401, "BAD_TOKEN", "token"],
      ["malformed", 401, "BAD_TOKEN", "token"],
      ["revoked", 401, "BAD_TOKEN", "token"],
      ["scope", 403, "TOKEN_SCOPE", "scope"],
      ["run", 403, "TOKEN_RUN", "run"],
      ["pair", 403, "TOKEN_PAIR", "pair"],
      ["expired", 401, "BAD_TOKEN", "token"],
    ]);
    for (const [label, , body] of answers) expect([label, JSON.stringify(body)]).not.toEqual([label, expect.stringMatching(COMMAND)]);
    const byLabel = Object.fromEntries(answers.map(([label, , b]) => [label, b]));
    expect(byLabel.scope?.details).toMatchObject({ scope: "freeze", token_scopes: "status" });
    expect(byLabel.scope?.message).toMatch(/does not have the freeze scope \(it has status\); a person who keeps the gate home can grant/);
    expect(byLabel.expired?.details).toMatchObject({ reason: "expired", expired_at: full.record.expires_at });
    expect(byLabel.run?.details).toMatchObject({ run_id: "run_0000000000000000", token_run: w.runId });
  });
});

describe("MCP's token refusals", () => {
  it("answer a tool outside the session's scope or pair with the code and what was missing, and no twinlock command", async () => {
    const w = await serverWorld();
    const statusOnly = await createAgentToken(w.home, { agent: "claude", runId: w.runId, scopes: ["status"] });
    const onePair = await createAgentToken(w.home, { agent: "claude", runId: w.runId, planner: PLANNER });
    const answers: Array<Record<string, unknown>> = [];
    for (const [token, planner] of [
      [statusOnly.token, PLANNER],
      [onePair.token, "MD-99"],
    ] as const) {
      const client = await mcpClientFor(w, token);
      const r = await client.callTool({ name: "twinlock_submit_handoff", arguments: { planner, handoff_dir: w.handoff } });
      await client.close();
      expect(r.isError).toBe(true);
      expect((r.content as Array<{ text: string }>)[0]?.text).not.toMatch(COMMAND);
      answers.push(r.structuredContent as Record<string, unknown>);
    }
    expect(answers.map((b) => [b.code, (b.details as Record<string, unknown>).missing])).toEqual([
      ["TOKEN_SCOPE", "scope"],
      ["TOKEN_PAIR", "pair"],
    ]);
    for (const b of answers) expect(JSON.stringify(b)).not.toMatch(COMMAND);
    expect(answers[0]?.message).toMatch(
      /this session does not have the freeze scope \(it has status\); a person who keeps the gate home can grant/,
    );
  });
});

describe("the words of each front end", () => {
  const refusals: TokenRefusal[] = [
    { code: "BAD_TOKEN", missing: "token", reason: "expired", expired_at: "2026-01-01T00:00:00.000Z" },
    { code: "TOKEN_SCOPE", missing: "scope", scope: "freeze", token_scopes: "status" },
    { code: "TOKEN_RUN", missing: "run", run_id: "run_0000000000000001", token_run: "run_0000000000000002" },
    { code: "TOKEN_PAIR", missing: "pair", planner: "MD-31", token_planner: "MD-29" },
  ];

  it("are the server's and MCP's without a command line, and the CLI's with the token create that grants what is missing", () => {
    for (const r of refusals) {
      expect([r.code, wordTokenRefusal(r)]).not.toEqual([r.code, expect.stringMatching(COMMAND)]);
      expect([r.code, wordTokenRefusalForCli(r)]).toEqual([r.code, expect.stringContaining("twinlock token create --run RUN_FILE")]);
      expect(isTokenRefusal(tokenRefusalError(r).details)).toBe(true);
      expect(tokenRefusalError(r).code).toBe(r.code);
    }
    expect(wordTokenRefusalForCli(refusals[1] as TokenRefusal)).toMatch(/--scopes status,freeze`$/);
    expect(wordTokenRefusalForCli(refusals[3] as TokenRefusal)).toMatch(/--planner MD-31`$/);
    expect(isTokenRefusal({ code: "TOKEN_SCOPE", missing: "run" })).toBe(false);
  });
});

import { UsageError } from "../../errors/errors.js";
import { loadPinnedPolicy } from "../../home/suite-pins.js";
import { parsePromptId } from "../../input/parse-input.js";
import {
  type AgentToken,
  ANY_RUN,
  createAgentToken,
  listAgentTokens,
  revokeAgentToken,
  TOKEN_SCOPES,
  type TokenScope,
} from "../../server/agent-tokens.js";
import type { RunStore } from "../../store/run-store.js";
import { keyOption } from "../../trust/key-option.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption, trustHomeOption } from "../home-option.js";

/** `twinlock token create`: a bearer token for one agent on one run (or, with `--ci`, CI's read-only one), printed once and stored hashed. */
export async function runTokenCreate(
  o: CommonOptions & {
    agent?: string;
    run?: string;
    planner?: string;
    expiresIn?: string;
    scopes?: string;
    freezeKey?: string;
    ci?: boolean;
  },
): Promise<CommandResult> {
  if (o.ci) return createCiToken(o);
  if (o.agent === undefined || o.run === undefined)
    throw new UsageError("token create needs --agent NAME and --run RUN (or --ci for CI's read-only export token)");
  const agent = o.agent;
  const store = storeOption(o);
  const run = await store.read(o.run);
  const planner = o.planner === undefined ? undefined : parsePromptId(o.planner, "--planner");
  if (planner !== undefined && !run.state.workflows[planner])
    throw new UsageError(
      `--planner ${planner} is not a pair of run ${run.state.run_id} (pairs: ${Object.keys(run.state.workflows).join(", ")})`,
    );
  requireAgentName(agent);
  const days = o.expiresIn === undefined ? undefined : Number(o.expiresIn.replace(/d$/, ""));
  const scopes = o.scopes === undefined ? undefined : parseScopes(o.scopes);
  const freezeKey = o.freezeKey === undefined ? undefined : keyOption(o.freezeKey);
  const { token, record } = await createAgentToken(store.home, {
    agent,
    runId: run.state.run_id,
    planner,
    scopes,
    expiresInDays: days,
    freezeKey,
  });
  const text = [
    `token ${record.id} for agent ${record.agent} on run ${record.run_id}${record.planner ? ` (${record.planner} only)` : ""}, until ${record.expires_at}`,
    `scopes: ${record.scopes.join(", ")} (never review, consent, apply approval, stops, pins, enrolment or tokens)`,
    ...(record.freeze_key
      ? [`its freezes are signed with ${record.freeze_key.slice(0, 28)}…, kept in the gate home (the agent never sees the key)`]
      : []),
    ...(record.freeze_key === null && record.scopes.includes("freeze") && signingSuite(store, run.state.suite)
      ? [
          "note: this suite requires signed receipts, so this token's freezes will be refused; make it with --freeze-key FILE (a planner key with the freeze right)",
        ]
      : []),
    "give it to the agent as `Authorization: Bearer <token>`; it is shown once and stored only as its hash:",
    token,
  ].join("\n");
  return tokenMade(token, record, text);
}

/** The answer of `token create`: the text, and the token with what it may do as JSON (never the stored hash). */
function tokenMade(token: string, record: AgentToken, text: string): CommandResult {
  const { id, agent, run_id, planner, scopes, expires_at } = record;
  return { exitCode: 0, text, json: { ok: true, token, id, agent, run_id, planner, scopes, expires_at } };
}

function requireAgentName(agent: string): void {
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,119}$/.test(agent))
    throw new UsageError(`--agent ${JSON.stringify(agent.slice(0, 40))} must be letters, digits, '.', '_' or '-'`);
}

/** `token create --ci [--run RUN]`: the export scope alone, for one run or every run, for CI to fetch the gate's signed export. */
async function createCiToken(
  o: CommonOptions & { agent?: string; run?: string; planner?: string; expiresIn?: string; scopes?: string; freezeKey?: string },
): Promise<CommandResult> {
  if (o.scopes !== undefined || o.freezeKey !== undefined || o.planner !== undefined)
    throw new UsageError("a CI token has the export scope alone: drop --scopes, --freeze-key and --planner with --ci");
  const agent = o.agent ?? "ci";
  requireAgentName(agent);
  const store = storeOption(o);
  const runId = o.run === undefined ? ANY_RUN : (await store.read(o.run)).state.run_id;
  const days = o.expiresIn === undefined ? undefined : Number(o.expiresIn.replace(/d$/, ""));
  const { token, record } = await createAgentToken(store.home, { agent, runId, scopes: ["export"], expiresInDays: days });
  const text = [
    `CI token ${record.id} (${record.agent}) for ${record.run_id === ANY_RUN ? "every run" : `run ${record.run_id}`}, until ${record.expires_at}`,
    "scope: export (GET /api/runs/RUN_ID/export: the run's gate-signed export; it reads nothing else and changes nothing)",
    "store it as the CI secret TWINLOCK_CI_TOKEN; it is shown once and stored only as its hash:",
    token,
  ].join("\n");
  return tokenMade(token, record, text);
}

function signingSuite(store: RunStore, suite: { root: string; suite_id: string | null }): boolean {
  try {
    return loadPinnedPolicy(store.home, suite).config.policies?.require_signed_receipts === true;
  } catch {
    return false;
  }
}

function parseScopes(text: string): TokenScope[] {
  const list = text
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = list.find((s) => !(TOKEN_SCOPES as readonly string[]).includes(s));
  if (bad !== undefined || list.length === 0)
    throw new UsageError(
      `--scopes ${JSON.stringify(text.slice(0, 80))}: ${bad === undefined ? "no scope given" : `${JSON.stringify(bad.slice(0, 40))} is not a scope`}; choose from ${TOKEN_SCOPES.join(", ")}`,
    );
  return list as TokenScope[];
}

/** `twinlock token revoke ID`. */
export async function runTokenRevoke(id: string, o: CommonOptions): Promise<CommandResult> {
  const record = await revokeAgentToken(await trustHomeOption(o), id);
  return {
    exitCode: 0,
    text: `revoked token ${record.id} (agent ${record.agent}, run ${record.run_id})`,
    json: { ok: true, id: record.id, revoked_at: record.revoked_at },
  };
}

/** `twinlock token list`: every token, never a secret. */
export async function runTokenList(o: CommonOptions): Promise<CommandResult> {
  const tokens = listAgentTokens(await trustHomeOption(o));
  const now = Date.now();
  const text =
    tokens.length === 0
      ? "no agent tokens"
      : tokens
          .map(
            (t) =>
              `${t.id}  ${t.agent}  ${t.run_id}${t.planner ? `/${t.planner}` : ""}  ${t.revoked_at ? `revoked ${t.revoked_at}` : Date.parse(t.expires_at) <= now ? `expired ${t.expires_at}` : `until ${t.expires_at}`}`,
          )
          .join("\n");
  return { exitCode: 0, text, json: { ok: true, tokens: tokens.map(({ secret_sha256: _s, ...t }) => t) } };
}

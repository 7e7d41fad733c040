import "../schemas/zod-setup.js";
import { createHash, createPrivateKey, type KeyObject, randomBytes, timingSafeEqual } from "node:crypto";
import { readFileSync } from "node:fs";
import path from "node:path";
import { z } from "zod";
import { RefusalError, UsageError } from "../errors/errors.js";
import { type GateHome, homeLabel, listHomeSubdir } from "../home/gate-home.js";
import { updateHomeFile } from "../home/shared-home.js";
import { promptId, runId } from "../run/run-schema.js";
import { publicKeyLine } from "../trust/keys.js";

/**
 * What an agent's token may do (SPEC §10): read a run's status, freeze a
 * handoff, read the frozen plan, ask whether admission would pass, and report
 * a result. Nothing else exists to grant: no scope reviews, consents,
 * approves an apply, lifts a stop, pins, enrols or makes tokens.
 */
export const AGENT_SCOPES = ["status", "freeze", "present", "admission_check", "result"] as const;
/**
 * What an executor's own MCP session may do (exec's relay, `twinlock mcp
 * --executor`): read its pair, its frozen plan, ask whether admission would
 * pass, and report its result. No freeze: the plan it runs is the one a
 * person approved.
 */
export const EXECUTOR_SCOPES = [
  "status",
  "present",
  "admission_check",
  "result",
] as const satisfies readonly (typeof AGENT_SCOPES)[number][];
/** Every scope a token can hold: an agent's, and CI's one (`export`: read a run's gate-signed export, nothing else). */
export const TOKEN_SCOPES = [...AGENT_SCOPES, "export"] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** The run of a CI token made for every run: it may only read exports. */
export const ANY_RUN = "*";

/** Whether a token is CI's: the export scope alone. */
export function isCiToken(t: { scopes: readonly TokenScope[] }): boolean {
  return t.scopes.length === 1 && t.scopes[0] === "export";
}

const tokenId = z.string().regex(/^tok_[0-9a-f]{16}$/);

/** A token as the gate home keeps it: only the sha256 of its secret, never the secret. */
export const AgentTokenSchema = z
  .object({
    format: z.literal("twinlock-token/1"),
    id: tokenId,
    agent: z.string().min(1).max(120),
    run_id: z.union([runId, z.literal(ANY_RUN)]),
    planner: z.nullable(promptId),
    scopes: z.array(z.enum(TOKEN_SCOPES)).min(1),
    secret_sha256: z.string().regex(/^[0-9a-f]{64}$/),
    created_at: z.string(),
    expires_at: z.string(),
    revoked_at: z.string().nullable(),
    /** The public key line of the planner key the home keeps for this token's freezes, if one was given. */
    freeze_key: z.string().max(200).nullable().default(null),
  })
  .strict();
export type AgentToken = z.infer<typeof AgentTokenSchema>;

/** Longest an agent's token may live: an agent session, not a standing credential. */
export const MAX_TOKEN_DAYS = 30;
/** Longest a CI token (export only, read-only) may live: a repository secret, renewed yearly. */
export const MAX_CI_TOKEN_DAYS = 366;

function tokenFile(home: GateHome, id: string): string {
  if (!tokenId.safeParse(id).success) throw new UsageError(`${JSON.stringify(id.slice(0, 40))} is not a token ID (tok_ and 16 hex digits)`);
  return path.join(home.dir, "tokens", `${id}.json`);
}

/** Where the home keeps a token's freeze key, beside its record. */
function tokenKeyFile(home: GateHome, id: string): string {
  return tokenFile(home, id).replace(/\.json$/, ".key");
}

function sha256Hex(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * Make a token for one agent and one run (and, with `planner`, one pair).
 * The secret is returned once and stored only as its hash.
 */
export async function createAgentToken(
  home: GateHome,
  request: {
    agent: string;
    runId: string;
    planner?: string;
    scopes?: readonly TokenScope[];
    expiresInDays?: number;
    freezeKey?: KeyObject;
  },
  now: Date = new Date(),
): Promise<{ token: string; record: AgentToken }> {
  const scopes = [...new Set(request.scopes ?? AGENT_SCOPES)];
  const ci = isCiToken({ scopes });
  if (scopes.includes("export") && !ci)
    throw new UsageError(
      "the export scope is CI's and goes alone (`token create --ci`); an agent's token reads its run with status and present",
    );
  if (request.runId === ANY_RUN && !ci) throw new UsageError("only a CI token (`token create --ci`) may be made for every run");
  const most = ci ? MAX_CI_TOKEN_DAYS : MAX_TOKEN_DAYS;
  const days = request.expiresInDays ?? (ci ? 90 : 1);
  if (!Number.isFinite(days) || days <= 0 || days > most)
    throw new UsageError(`--expires-in ${days} is out of range; give a number of days between 0 and ${most}`);
  const id = `tok_${randomBytes(8).toString("hex")}`;
  const secret = `tl_${id.slice(4)}_${randomBytes(32).toString("base64url")}`;
  const record = AgentTokenSchema.parse({
    format: "twinlock-token/1",
    id,
    agent: request.agent,
    run_id: request.runId,
    planner: request.planner ?? null,
    scopes,
    secret_sha256: sha256Hex(secret),
    created_at: now.toISOString(),
    expires_at: new Date(now.getTime() + days * 86_400_000).toISOString(),
    revoked_at: null,
    freeze_key: request.freezeKey ? publicKeyLine(request.freezeKey) : null,
  });
  // The key first: a token record never names a key file that is not there.
  if (request.freezeKey) {
    const pem = request.freezeKey.export({ type: "pkcs8", format: "pem" }).toString();
    await updateHomeFile(home, `tokens/${id}.key`, () => ({ text: pem, result: undefined }));
  }
  await updateHomeFile(home, `tokens/${id}.json`, (text) => {
    if (text !== undefined) throw new RefusalError(`token ${id} exists already; make the token again`);
    return { text: `${JSON.stringify(record)}\n`, result: undefined };
  });
  return { token: secret, record };
}

/** Every token the home knows (a damaged file is skipped: it can authorize nothing). */
export function listAgentTokens(home: GateHome): AgentToken[] {
  return listHomeSubdir(home, "tokens")
    .filter((n) => /^tok_[0-9a-f]{16}\.json$/.test(n))
    .flatMap((n) => {
      const record = readToken(home, n.slice(0, -5));
      return record ? [record] : [];
    })
    .sort((a, b) => a.created_at.localeCompare(b.created_at));
}

function readToken(home: GateHome, id: string): AgentToken | undefined {
  try {
    return parseToken(readFileSync(tokenFile(home, id), "utf8"));
  } catch {
    return undefined;
  }
}

function parseToken(text: string): AgentToken | undefined {
  try {
    const parsed = AgentTokenSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** Revoke a token for good; revoking twice is refused, naming when it was revoked. */
export async function revokeAgentToken(home: GateHome, id: string, now: Date = new Date()): Promise<AgentToken> {
  tokenFile(home, id);
  const revoked = await updateHomeFile(home, `tokens/${id}.json`, (text) => {
    const record = text === undefined ? undefined : parseToken(text);
    if (!record) throw new RefusalError(`no token ${id} in ${homeLabel(home)}; list them with \`twinlock token list\``);
    if (record.revoked_at) throw new RefusalError(`token ${id} was already revoked at ${record.revoked_at}`);
    const revoked = { ...record, revoked_at: now.toISOString() };
    return { text: `${JSON.stringify(revoked)}\n`, result: revoked };
  });
  // The planner key the home kept for this token's freezes is of no more use: it goes too (from every copy of a team store's home).
  if (revoked.freeze_key !== null) await updateHomeFile(home, `tokens/${id}.key`, () => ({ text: null, result: undefined }));
  return revoked;
}

/**
 * The planner key the home keeps for a token's freezes (`token create
 * --freeze-key`), or undefined. The agent never holds it: the server signs
 * its freezes, and the suite's policy decides whether that key may freeze.
 */
export function readTokenFreezeKey(home: GateHome, token: AgentToken): KeyObject | undefined {
  if (token.freeze_key === null) return undefined;
  let key: KeyObject;
  try {
    key = createPrivateKey(readFileSync(tokenKeyFile(home, token.id)));
  } catch {
    throw new RefusalError(`the freeze key of token ${token.id} is missing from the gate home; make a new token`);
  }
  if (publicKeyLine(key) !== token.freeze_key)
    throw new RefusalError(`the freeze key of token ${token.id} is not the one it was made with; make a new token`);
  return key;
}

/** Why a presented token authorizes nothing, for the access log (never shown the secret). */
export type TokenVerdict =
  | { ok: true; token: AgentToken }
  | { ok: false; reason: "malformed" | "unknown" | "revoked" }
  | { ok: false; reason: "expired"; expired_at: string };

/**
 * Check a bearer secret: its ID names a token file, the sha256 of the whole
 * secret equals the stored one (compared in constant time), and it is
 * neither revoked nor expired.
 */
export function verifyAgentToken(home: GateHome, secret: string, now: Date = new Date()): TokenVerdict {
  const m = /^tl_([0-9a-f]{16})_[A-Za-z0-9_-]{43}$/.exec(secret);
  if (!m) return { ok: false, reason: "malformed" };
  const record = readToken(home, `tok_${m[1]}`);
  if (!record) return { ok: false, reason: "unknown" };
  const given = Buffer.from(sha256Hex(secret), "hex");
  const stored = Buffer.from(record.secret_sha256, "hex");
  if (given.length !== stored.length || !timingSafeEqual(given, stored)) return { ok: false, reason: "unknown" };
  if (record.revoked_at) return { ok: false, reason: "revoked" };
  if (Date.parse(record.expires_at) <= now.getTime()) return { ok: false, reason: "expired", expired_at: record.expires_at };
  return { ok: true, token: record };
}

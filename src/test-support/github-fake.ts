import { createPublicKey, createVerify, type KeyObject, randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

/** One request the fake took: what a test asserts on. `auth` is which credential it carried. */
export interface GitHubRequest {
  method: string;
  path: string;
  auth: "app-jwt" | "installation-token" | "bad-jwt" | "unknown-token" | "none";
  body: Record<string, unknown> | null;
}

/** How the fake answers one request before its own handling: `undefined` handles it as GitHub would; else a status, or "hang". */
export type GitHubBehaviour = (req: GitHubRequest, n: number) => number | "hang" | undefined;

/** A stand-in for the few GitHub REST endpoints `serve --github-app` calls, on 127.0.0.1, built from GitHub's REST documentation. */
export interface GitHubFake {
  /** The API base to give as `--github-api`. */
  url: string;
  requests: GitHubRequest[];
  /** Check runs as they stand, by ID. */
  checkRuns: Map<number, Record<string, unknown>>;
  /** The head commit each pull request number answers with (change it to push a commit). */
  heads: Map<number, string>;
  behave: GitHubBehaviour | undefined;
  close(): Promise<void>;
}

/**
 * Start the fake: `POST /app/installations/{id}/access_tokens` (a valid
 * RS256 app JWT for `appId`, iat/exp within ten minutes → 201 with a token),
 * `GET /repos/{o}/{r}/pulls/{n}` (→ `head.sha`), `GET
 * /repos/{o}/{r}/branches/{b}` (→ `commit.sha`), `POST
 * /repos/{o}/{r}/check-runs` (→ 201 with `id`), `GET
 * /repos/{o}/{r}/commits/{sha}/check-runs` (`check_name`, `app_id` honoured; →
 * `{total_count, check_runs}`), `PATCH
 * /repos/{o}/{r}/check-runs/{id}` (→ 200); the repository routes take only
 * the installation token. Everything is recorded, in order.
 */
export async function startGitHubFake(o: { appId: string; appKey: KeyObject; installationId: string }): Promise<GitHubFake> {
  const publicKey = createPublicKey(o.appKey);
  const tokens = new Set<string>();
  let nextId = 1000;
  const fake: GitHubFake = {
    url: "",
    requests: [],
    checkRuns: new Map(),
    heads: new Map(),
    behave: undefined,
    close: async () => {},
  };
  const hanging = new Set<ServerResponse>();
  const answer = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(body));
  };
  const authOf = (header: string | undefined): GitHubRequest["auth"] => {
    if (!header?.startsWith("Bearer ")) return "none";
    const value = header.slice(7);
    if (tokens.has(value)) return "installation-token";
    const parts = value.split(".");
    if (parts.length !== 3) return "unknown-token";
    try {
      const header = JSON.parse(Buffer.from(parts[0] as string, "base64url").toString());
      const claims = JSON.parse(Buffer.from(parts[1] as string, "base64url").toString());
      const v = createVerify("RSA-SHA256");
      v.update(`${parts[0]}.${parts[1]}`);
      const now = Math.floor(Date.now() / 1000);
      const ok =
        header.alg === "RS256" &&
        v.verify(publicKey, Buffer.from(parts[2] as string, "base64url")) &&
        claims.iss === o.appId &&
        claims.iat <= now &&
        claims.exp > now &&
        claims.exp - claims.iat <= 600;
      return ok ? "app-jwt" : "bad-jwt";
    } catch {
      return "bad-jwt";
    }
  };
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    let body: Record<string, unknown> | null = null;
    try {
      body = text === "" ? null : JSON.parse(text);
    } catch {
      body = { unparsable: text.slice(0, 200) };
    }
    const path = (req.url ?? "").split("?")[0] as string;
    const query = new URLSearchParams((req.url ?? "").split("?")[1] ?? "");
    const r: GitHubRequest = { method: req.method ?? "", path, auth: authOf(req.headers.authorization), body };
    fake.requests.push(r);
    const special = fake.behave?.(r, fake.requests.length);
    if (special === "hang") {
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
      return;
    }
    if (typeof special === "number") return answer(res, special, { message: "as the test asked" });
    if (req.headers.accept !== "application/vnd.github+json") return answer(res, 415, { message: "accept" });
    let m = /^\/app\/installations\/([0-9]+)\/access_tokens$/.exec(path);
    if (m && r.method === "POST") {
      if (r.auth !== "app-jwt" || m[1] !== o.installationId) return answer(res, 401, { message: "A JSON web token could not be decoded" });
      const token = `ghs_${randomBytes(18).toString("hex")}`;
      tokens.add(token);
      return answer(res, 201, { token, expires_at: new Date(Date.now() + 3_600_000).toISOString(), permissions: { checks: "write" } });
    }
    if (r.auth !== "installation-token") return answer(res, 401, { message: "Bad credentials" });
    m = /^\/repos\/[^/]+\/[^/]+\/pulls\/([0-9]+)$/.exec(path);
    if (m && r.method === "GET") {
      const sha = fake.heads.get(Number(m[1]));
      return sha ? answer(res, 200, { number: Number(m[1]), head: { sha, ref: "agent" } }) : answer(res, 404, { message: "Not Found" });
    }
    m = /^\/repos\/[^/]+\/[^/]+\/branches\/(.+)$/.exec(path);
    if (m && r.method === "GET") {
      const sha = fake.heads.get(0);
      return sha
        ? answer(res, 200, { name: decodeURIComponent(m[1] as string), commit: { sha } })
        : answer(res, 404, { message: "Branch not found" });
    }
    m = /^\/repos\/[^/]+\/[^/]+\/commits\/([0-9a-f]{40})\/check-runs$/.exec(path);
    if (m && r.method === "GET") {
      const sha = m[1];
      const listed = [...fake.checkRuns.values()].filter(
        (c) =>
          c.head_sha === sha &&
          (!query.has("check_name") || c.name === query.get("check_name")) &&
          (!query.has("app_id") || String((c.app as { id: number }).id) === query.get("app_id")),
      );
      return answer(res, 200, { total_count: listed.length, check_runs: listed });
    }
    if (/^\/repos\/[^/]+\/[^/]+\/check-runs$/.test(path) && r.method === "POST") {
      if (typeof body?.name !== "string" || typeof body.head_sha !== "string") return answer(res, 422, { message: "Validation Failed" });
      if (body.status === "completed" && body.conclusion === undefined) return answer(res, 422, { message: "conclusion required" });
      const id = nextId++;
      fake.checkRuns.set(id, { ...body, id, app: { id: Number(o.appId) } });
      return answer(res, 201, { id, head_sha: body.head_sha, name: body.name, status: body.status });
    }
    m = /^\/repos\/[^/]+\/[^/]+\/check-runs\/([0-9]+)$/.exec(path);
    if (m && r.method === "PATCH") {
      const run = fake.checkRuns.get(Number(m[1]));
      if (!run) return answer(res, 404, { message: "Not Found" });
      fake.checkRuns.set(Number(m[1]), { ...run, ...body });
      return answer(res, 200, { ...run, ...body });
    }
    return answer(res, 404, { message: "Not Found" });
  };
  const server: Server = createServer((req, res) => void handle(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  fake.close = () =>
    new Promise<void>((resolve) => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return fake;
}

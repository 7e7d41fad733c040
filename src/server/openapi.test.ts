/**
 * `/openapi.json` describes the API the server really has: OpenAPI 3.1,
 * every `/api/` route the app registers and no other, request schemas
 * generated from the zod definitions the routes validate with, and human
 * decisions offered to reviewers' sessions only.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { REVIEW_DECISIONS } from "../gate/review-pair-plan.js";
import { MODES } from "../suite/prompt.js";
import { call, removeServerWorlds, type ServerWorld, serverWorld } from "../test-support/gate-server-fixture.js";
import { TOKEN_SCOPES } from "./agent-tokens.js";
import { ConsentRequest, FreezeRequest, ReviewRequest } from "./api-schemas.js";

type Operation = {
  security: Array<Record<string, unknown>>;
  "x-agent-token-scope"?: string;
  requestBody?: { content: { "application/json": { schema: { properties: Record<string, { enum?: unknown[] }>; required?: string[] } } } };
};
type Doc = { openapi: string; servers: Array<{ url: string }>; paths: Record<string, Record<string, Operation>> };

let w: ServerWorld;
let doc: Doc;

beforeAll(async () => {
  w = await serverWorld();
  const r = await call(w, "/openapi.json");
  expect(r.status).toBe(200);
  doc = (await r.json()) as Doc;
});
afterAll(removeServerWorlds);

/** `method path` of every `/api/` route the app registers, in OpenAPI's `{param}` form. */
function apiRoutes(): string[] {
  return [
    ...new Set(
      w.app.routes
        .filter((r) => r.method !== "ALL" && r.path.startsWith("/api/"))
        .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([A-Za-z]+)/g, "{$1}")}`),
    ),
  ].sort();
}

function documented(): string[] {
  return Object.entries(doc.paths)
    .flatMap(([p, item]) =>
      Object.keys(item)
        .filter((k) => k !== "parameters")
        .map((m) => `${m} ${p}`),
    )
    .sort();
}

const schemaOf = (p: string) => doc.paths[p]?.post?.requestBody?.content["application/json"].schema;

describe("/openapi.json", () => {
  it("is OpenAPI 3.1 naming the server's own origin", () => {
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers).toEqual([{ url: "http://localhost:7420" }]);
  });

  it("documents exactly the /api/ routes the app registers", () => {
    expect(apiRoutes().length).toBeGreaterThanOrEqual(17);
    expect(documented()).toEqual(apiRoutes());
  });

  it("publishes the review request's decisions as REVIEW_DECISIONS, on both halves of the decision", () => {
    for (const p of ["/api/runs/{runId}/pairs/{planner}/review/challenge", "/api/runs/{runId}/pairs/{planner}/review"]) {
      expect(schemaOf(p)?.properties.decision?.enum).toEqual([...REVIEW_DECISIONS]);
      expect(schemaOf(p)?.required).toEqual(expect.arrayContaining(["handoff_hash", "decision"]));
    }
    expect(schemaOf("/api/runs/{runId}/pairs/{planner}/review")?.required).toEqual(expect.arrayContaining(["challenge_id", "assertion"]));
  });

  it("uses the zod schemas the routes validate with", () => {
    const fromZod = (s: z.ZodType) => z.toJSONSchema(s, { target: "draft-2020-12", unrepresentable: "any", io: "input" });
    expect(schemaOf("/api/runs/{runId}/pairs/{planner}/review/challenge")).toEqual(fromZod(ReviewRequest));
    expect(schemaOf("/api/runs/{runId}/pairs/{planner}/consent/challenge")).toEqual(fromZod(ConsentRequest));
    expect(schemaOf("/api/runs/{runId}/pairs/{planner}/freeze")).toEqual(fromZod(FreezeRequest));
    expect(schemaOf("/api/runs/{runId}/pairs/{planner}/consent/challenge")?.properties.mode?.enum).toEqual([...MODES]);
  });

  it("offers every human decision to reviewers' sessions only, and each agent operation under one token scope", () => {
    for (const [p, item] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(item)) {
        if (method === "parameters") continue;
        const human = /\/(review|consent|apply-approval|verified-close|stops|stops\/lift)(\/challenge)?$/.test(p);
        if (human) {
          expect([p, op.security]).toEqual([p, [{ reviewerSession: [] }]]);
          expect(op["x-agent-token-scope"]).toBeUndefined();
        } else if (p !== "/api/runs") {
          expect([p, TOKEN_SCOPES.includes(op["x-agent-token-scope"] as never)]).toEqual([p, true]);
        }
      }
  });
});

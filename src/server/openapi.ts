import "../schemas/zod-setup.js";
import { z } from "zod";
import { RUN_ID_PATTERN } from "../run/run-schema.js";
import {
  AdmissionCheckRequest,
  AdmissionCheckResponse,
  ApplyApprovalRequest,
  ChallengeResponse,
  ConsentRequest,
  DecisionResponse,
  FreezeRequest,
  LiftStopRequest,
  ProblemResponse,
  ResultRequest,
  ReviewRequest,
  RunResponse,
  StopRequest,
  VerifiedCloseRequest,
} from "./api-schemas.js";

type Schema = z.ZodType;

function json(schema: Schema): Record<string, unknown> {
  return z.toJSONSchema(schema, { target: "draft-2020-12", unrepresentable: "any", io: "input" }) as Record<string, unknown>;
}

const problem = {
  description: "refused: a stable `code`, one line, and data",
  content: { "application/json": { schema: { $ref: "#/components/schemas/Problem" } } },
};

function op(
  summary: string,
  security: "agent" | "reviewer" | "either",
  request?: Schema,
  response?: Schema,
  scope?: string,
): Record<string, unknown> {
  return {
    summary,
    ...(scope ? { "x-agent-token-scope": scope } : {}),
    security:
      security === "agent"
        ? [{ agentToken: [] }]
        : security === "reviewer"
          ? [{ reviewerSession: [] }]
          : [{ agentToken: [] }, { reviewerSession: [] }],
    ...(request ? { requestBody: { required: true, content: { "application/json": { schema: json(request) } } } } : {}),
    responses: {
      "200": { description: "done", content: { "application/json": { schema: response ? json(response) : { type: "object" } } } },
      "400": problem,
      "401": problem,
      "403": problem,
      "409": problem,
    },
  };
}

const runId = { name: "runId", in: "path", required: true, schema: { type: "string", pattern: RUN_ID_PATTERN.source } };
const planner = { name: "planner", in: "path", required: true, schema: { type: "string" } };
const executor = { name: "executor", in: "path", required: true, schema: { type: "string" } };

/** A human decision's two requests: the challenge (the receipt's hash to sign), then the decision with the passkey's assertion. */
function passkeyPair(summary: string, request: Schema, parameters: unknown[]): [Record<string, unknown>, Record<string, unknown>] {
  const signed = request instanceof z.ZodObject ? request.extend({ challenge_id: z.string(), assertion: z.string() }) : request;
  return [
    {
      parameters,
      post: op(`${summary}: ask for the passkey challenge (the receipt's signing hash)`, "reviewer", request, ChallengeResponse),
    },
    { parameters, post: op(`${summary}: complete with the passkey's assertion`, "reviewer", signed, DecisionResponse) },
  ];
}

/**
 * The JSON API as OpenAPI 3.1 (`/openapi.json`), its request and response
 * schemas generated from the same zod definitions the server validates
 * with. Human decisions are a pair of requests (challenge, then assertion)
 * and need a reviewer's session; agent tokens reach only the five scopes.
 */
export function buildOpenApi(origin: string): Record<string, unknown> {
  const paths: Record<string, unknown> = {};
  const add = (p: string, v: Record<string, unknown>) => {
    paths[p] = { ...(paths[p] as object | undefined), ...v };
  };
  add("/api/runs", { get: op("List the runs this caller may see", "either") });
  add("/api/runs/{runId}", { parameters: [runId], get: op("A run's state", "either", undefined, RunResponse, "status") });
  add("/api/runs/{runId}/pairs/{planner}", {
    parameters: [runId, planner],
    get: op("A pair's status and next step", "either", undefined, undefined, "status"),
  });
  add("/api/runs/{runId}/pairs/{planner}/plan", {
    parameters: [runId, planner],
    get: op("The frozen plan of a revision, from the frozen bytes", "either", undefined, undefined, "present"),
  });
  add("/api/runs/{runId}/export", {
    parameters: [runId],
    get: op(
      "The run file with its head signed by the gate as an export: CI's evidence (a CI token, `token create --ci`)",
      "either",
      undefined,
      undefined,
      "export",
    ),
  });
  add("/api/runs/{runId}/pairs/{planner}/freeze", {
    parameters: [runId, planner],
    post: op("Freeze the planner's handoff", "agent", FreezeRequest, undefined, "freeze"),
  });
  add("/api/runs/{runId}/executors/{executor}/admission-check", {
    parameters: [runId, executor],
    post: op(
      "Whether admission would pass now, check by check (nothing recorded)",
      "either",
      AdmissionCheckRequest,
      AdmissionCheckResponse,
      "admission_check",
    ),
  });
  add("/api/runs/{runId}/pairs/{planner}/result", {
    parameters: [runId, planner],
    post: op("Report how the work ended", "agent", ResultRequest, undefined, "result"),
  });
  for (const [p, summary, schema, params] of [
    ["/api/runs/{runId}/pairs/{planner}/review", "Record a review of the exact revision shown", ReviewRequest, [runId, planner]],
    ["/api/runs/{runId}/pairs/{planner}/consent", "Consent to run exactly the twin", ConsentRequest, [runId, planner]],
    ["/api/runs/{runId}/pairs/{planner}/apply-approval", "Approve applying the consented plan", ApplyApprovalRequest, [runId, planner]],
    [
      "/api/runs/{runId}/pairs/{planner}/verified-close",
      "Close the executing pair as verified (the verify right)",
      VerifiedCloseRequest,
      [runId, planner],
    ],
    ["/api/runs/{runId}/stops", "Raise a hard stop", StopRequest, [runId]],
    ["/api/runs/{runId}/stops/lift", "Lift a hard stop", LiftStopRequest, [runId]],
  ] as const) {
    const [challenge, complete] = passkeyPair(summary, schema, [...params]);
    add(`${p}/challenge`, challenge);
    add(p, complete);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "twinlock gate server",
      version: "1",
      description:
        "The plan-review and exact-twin execution gate: agents freeze and ask; people review, approve and consent with passkeys.",
    },
    servers: [{ url: origin }],
    paths,
    components: {
      schemas: { Problem: json(ProblemResponse) },
      securitySchemes: {
        agentToken: {
          type: "http",
          scheme: "bearer",
          description:
            "an agent token (`twinlock token create`): status, freeze, present, admission check, result only; a CI token (`--ci`): export only",
        },
        reviewerSession: {
          type: "apiKey",
          in: "cookie",
          name: "twinlock_session",
          description:
            "a reviewer signed in with a passkey (`__Host-twinlock_session` over https), valid only on the origin it was signed in on; decisions also need X-CSRF-Token and a passkey assertion",
        },
      },
    },
  };
}

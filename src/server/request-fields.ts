import type { AuthenticationResponseJSON } from "@simplewebauthn/server";
import type { Context } from "hono";
import type { z } from "zod";
import { PROMPT_ID_PATTERN } from "../suite/prompt.js";
import { HttpProblem } from "./http-problem.js";

/** A request body, JSON or a form (browsers), as one object of fields; anything else is refused. */
export async function readFields(c: Context): Promise<Record<string, unknown>> {
  const type = c.req.header("content-type") ?? "";
  // The media type alone, as RFC 9110 reads it (case-insensitive, parameters after `;`): `application/jsonx` is not JSON.
  const media = (type.split(";")[0] ?? "").trim().toLowerCase();
  if (media === "application/json") {
    let json: unknown;
    try {
      json = await c.req.json();
    } catch {
      throw new HttpProblem(400, "BAD_INPUT", "the request body is not valid JSON");
    }
    if (typeof json !== "object" || json === null || Array.isArray(json))
      throw new HttpProblem(400, "BAD_INPUT", "the request body must be a JSON object");
    return json as Record<string, unknown>;
  }
  if (media === "multipart/form-data" || media === "application/x-www-form-urlencoded") {
    const body = await c.req.parseBody({ all: true });
    // No prototype: a field named `__proto__` or `constructor` is a field like any other, then refused by the strict schemas.
    const out: Record<string, unknown> = Object.create(null);
    for (const [k, v] of Object.entries(body)) {
      const values = (Array.isArray(v) ? v : [v]).filter((x): x is string => typeof x === "string");
      out[k] = k === "actions" ? values : values[values.length - 1];
    }
    return out;
  }
  if (type === "" && c.req.method === "POST") return {};
  throw new HttpProblem(415, "BAD_INPUT", `send application/json or a form, not ${media}`);
}

/** The fields as a request of `schema` (the form's CSRF token and the passkey's answer set aside), or a 400 naming the first issue. */
export function parseFields<S extends z.ZodType>(schema: S, fields: Record<string, unknown>): z.infer<S> {
  const { csrf: _c, challenge_id: _i, assertion: _a, ...rest } = fields;
  const parsed = schema.safeParse(rest);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new HttpProblem(400, "BAD_INPUT", `${issue?.path.join(".") || "body"}: ${issue?.message}`);
  }
  return parsed.data;
}

/**
 * A prompt ID from the path (a planner or executor): anything that is not
 * one (`__proto__`, `constructor`, `toString`, …) is a 404 before it can
 * index a run's records.
 */
export function promptParam(c: Context, name: string): string {
  const v = param(c, name);
  if (!PROMPT_ID_PATTERN.test(v))
    throw new HttpProblem(404, "UNKNOWN_PAIR", `${JSON.stringify(v.slice(0, 40))} is not a prompt ID (like MD-29)`);
  return v;
}

/** A path parameter; every route that asks for one declares it, so a missing one is a 404. */
export function param(c: Context, name: string): string {
  const v = c.req.param(name);
  if (typeof v !== "string" || v === "") throw new HttpProblem(404, "NOT_FOUND", `missing ${name} in the path`);
  return v;
}

/** A form's empty field as no field. */
export function emptyToUndefined(v: unknown): unknown {
  return v === "" ? undefined : v;
}

/** A passkey's answer (JSON, or JSON text from a form) with the fields an assertion needs, or a 400. */
export function parseAssertion(raw: unknown): AuthenticationResponseJSON {
  let value = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new HttpProblem(400, "BAD_INPUT", "the passkey's answer is not JSON");
    }
  }
  const a = value as AuthenticationResponseJSON | undefined;
  const ok =
    a &&
    typeof a === "object" &&
    typeof a.rawId === "string" &&
    a.response &&
    typeof a.response.authenticatorData === "string" &&
    typeof a.response.clientDataJSON === "string" &&
    typeof a.response.signature === "string";
  if (!ok) throw new HttpProblem(400, "BAD_INPUT", "the passkey's answer is missing (sign with your passkey through the page)");
  return a as AuthenticationResponseJSON;
}

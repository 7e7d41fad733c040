import type { Context } from "hono";
import { describeProblem, HttpProblem } from "./http-problem.js";
import type { FailureBudget } from "./request-guards.js";

/**
 * Run an attempt; a refusal counts against the client's budget, and past it
 * is answered 429 (a success never is).
 */
export async function limitFailures<T>(
  c: Context,
  budget: FailureBudget,
  client: { clientOf(c: Context): string; now: () => Date },
  work: () => Promise<T>,
): Promise<T> {
  try {
    return await work();
  } catch (error) {
    const key = client.clientOf(c);
    const at = client.now().getTime();
    if (describeProblem(error).status < 500 && budget.fail(key, at)) {
      c.header("Retry-After", String(budget.retryAfter(key, at)));
      throw new HttpProblem(429, "RATE_LIMITED", `too many failed ${budget.kind} attempts from this address; wait a minute and try again`);
    }
    throw error;
  }
}

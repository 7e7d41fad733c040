import { randomBytes } from "node:crypto";
import type { Context } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import { findCredential } from "../../passkey/reviewer-registry.js";
import { renderSignInPage } from "../../web/render-signin-page.js";
import { type GateApp, type GateContext, originTag } from "../gate-context.js";
import { HttpProblem } from "../http-problem.js";
import { limitFailures } from "../limit-failures.js";
import { requireAssertion } from "../passkey-decisions.js";
import { parseAssertion, readFields } from "../request-fields.js";
import { FailureBudget, rateLimit } from "../request-guards.js";

/** Passkey sign-in and sign-out: a session cookie bound to this origin, starts limited per client, failures budgeted. */
export function addSignInRoutes(app: GateApp, ctx: GateContext): void {
  const { home, now, rp, secureCookie } = ctx;
  // A team store keeps each started sign-in in the database: starts are limited per client. In memory, a start keeps nothing.
  const signinStartLimit = ctx.store.serverState
    ? rateLimit("sign-in", 30, ctx.clientOf)
    : async (_c: Context, next: () => Promise<void>) => {
        await next();
      };
  const signinFailures = new FailureBudget("sign-in", 30);
  app.get("/signin", (c) => c.html(renderSignInPage({ layout: ctx.layoutFor(c), next: null })));
  app.post("/signin/options", signinStartLimit, async (c) => {
    const entry = await ctx.signins.add({ reviewer: "", request: "signin", challenge: randomBytes(32), at: now() }, now().getTime());
    setCookie(c, "twinlock_signin", entry.id, { httpOnly: true, sameSite: "Strict", secure: secureCookie, path: "/signin", maxAge: 120 });
    return c.json({
      ok: true,
      options: {
        challenge: entry.challenge.toString("base64url"),
        rpId: rp.id,
        timeout: 120_000,
        userVerification: "required",
        allowCredentials: [],
      },
    });
  });
  app.post("/signin", async (c) =>
    limitFailures(c, signinFailures, ctx, async () => {
      const fields = await readFields(c);
      const entry = await ctx.signins.take(getCookie(c, "twinlock_signin") ?? "", now().getTime());
      deleteCookie(c, "twinlock_signin", { path: "/signin" });
      if (!entry) throw new HttpProblem(409, "CHALLENGE_EXPIRED", "the sign-in request expired; press the button again");
      const response = parseAssertion(fields.response);
      const found = findCredential(home, response.rawId);
      if (!found)
        throw new HttpProblem(
          403,
          "UNKNOWN_PASSKEY",
          "this passkey is not enrolled here; ask for an invitation (`twinlock reviewer invite NAME`)",
        );
      requireAssertion(found.credential, response, entry.challenge);
      const session = await ctx.sessions.open(found.reviewer.name, found.reviewer.rights, now().getTime());
      setCookie(c, ctx.sessionCookie, `${session.id}.${originTag(ctx.requestOrigin(c), session)}`, {
        httpOnly: true,
        sameSite: "Strict",
        secure: secureCookie,
        path: "/",
        maxAge: 8 * 3600,
      });
      return c.json({ ok: true, location: "/", reviewer: found.reviewer.name });
    }),
  );
  app.post("/signout", async (c) => {
    const fields = await readFields(c);
    const session = await ctx.requireReviewer(c, fields);
    await ctx.sessions.close(session.id);
    deleteCookie(c, ctx.sessionCookie, { path: "/", secure: secureCookie });
    // The page's script asks for JSON; a plain form post (no script) is sent on to the sign-in page.
    if (!(c.req.header("accept") ?? "").includes("application/json")) return c.redirect("/signin", 303);
    return c.json({ ok: true, location: "/signin" });
  });
}

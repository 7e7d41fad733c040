import type { RegistrationResponseJSON } from "@simplewebauthn/server";
import { RefusalError } from "../../errors/errors.js";
import { findUsableInvitation, finishEnrolment, startEnrolment } from "../../passkey/passkey-enrolment.js";
import { renderEnrolPage } from "../../web/render-enrol-page.js";
import type { GateApp, GateContext } from "../gate-context.js";
import { HttpProblem } from "../http-problem.js";
import { limitFailures } from "../limit-failures.js";
import { param, readFields } from "../request-fields.js";
import { FailureBudget } from "../request-guards.js";

/** Passkey enrolment from an invitation link: the page, the registration options, and the finished registration. */
export function addEnrolRoutes(app: GateApp, ctx: GateContext): void {
  const { home, now, rp } = ctx;
  const enrolFailures = new FailureBudget("enrolment", 20);
  app.get("/enrol/:token", async (c) =>
    limitFailures(c, enrolFailures, ctx, async () => {
      const token = param(c, "token");
      const invitation = invitationFor(token);
      return c.html(
        renderEnrolPage({
          layout: ctx.layoutFor(c),
          name: invitation.name,
          rights: invitation.rights,
          expiresAt: invitation.expires_at,
          token,
        }),
      );
    }),
  );
  app.post("/enrol/:token/options", async (c) =>
    limitFailures(c, enrolFailures, ctx, async () => {
      const token = param(c, "token");
      const started = await startEnrolment(home, token, rp, now());
      return c.json({ ok: true, options: started.options });
    }),
  );
  app.post("/enrol/:token", async (c) =>
    limitFailures(c, enrolFailures, ctx, async () => {
      const token = param(c, "token");
      const fields = await readFields(c);
      // The challenge is the one startEnrolment recorded on the invitation (in the home, so any server of a team store finishes it).
      const expected = findUsableInvitation(home, token, now()).challenge;
      if (!expected) throw new HttpProblem(409, "CHALLENGE_EXPIRED", "start the registration again (press the button)");
      const done = await finishEnrolment(home, token, fields.response as RegistrationResponseJSON, expected, rp, now());
      return c.json({ ok: true, name: done.reviewer.name });
    }),
  );

  function invitationFor(token: string): { name: string; rights: string[]; expires_at: string } {
    try {
      return findUsableInvitation(home, token, now());
    } catch (error) {
      // The page does not say which: an unknown link, a used one and an expired one look alike to whoever guesses.
      if (!(error instanceof RefusalError)) throw error;
      throw new HttpProblem(
        404,
        "UNKNOWN_INVITATION",
        "this enrolment link is unknown, used or expired; ask for a new one (`twinlock reviewer invite NAME`)",
      );
    }
  }
}

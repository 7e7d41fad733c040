import { UsageError } from "../../errors/errors.js";
import { createInvitation } from "../../passkey/passkey-enrolment.js";
import { listReviewers, revokeReviewer } from "../../passkey/reviewer-registry.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { trustHomeOption } from "../home-option.js";

/** `twinlock reviewer invite NAME`: a one-time enrolment link (15 minutes, single use) for the gate server's pages. */
export async function runReviewerInvite(name: string, o: CommonOptions & { rights?: string; origin?: string }): Promise<CommandResult> {
  const origin = o.origin ?? "http://localhost:7420";
  if (!/^https?:\/\/[^/]+$/.test(origin))
    throw new UsageError(`--origin ${JSON.stringify(origin)} is not an origin like http://localhost:7420`);
  const home = await trustHomeOption(o);
  const rights = o.rights ?? "review,consent,apply,stop";
  const { token, expiresAt, replaced } = await createInvitation(home, name, rights);
  const link = `${origin}/enrol/${token}`;
  const text = [
    `invitation for ${name} (rights: ${rights}), single use, until ${expiresAt}${replaced ? "; the earlier link for this name no longer works" : ""}`,
    `open it in the browser where ${name} keeps their passkey, with \`twinlock serve\` running:`,
    link,
  ].join("\n");
  return { exitCode: 0, text, json: { ok: true, name, rights: rights.split(","), link, expires_at: expiresAt } };
}

/** `twinlock reviewer list`. */
export async function runReviewerList(o: CommonOptions): Promise<CommandResult> {
  const reviewers = listReviewers(await trustHomeOption(o));
  const text =
    reviewers.length === 0
      ? "no reviewers enrolled; invite one with `twinlock reviewer invite NAME`"
      : reviewers
          .map((r) => `${r.name}  ${r.rights.join(",")}  ${r.credentials.length} passkey(s)${r.revoked ? `  revoked ${r.revoked_at}` : ""}`)
          .join("\n");
  return {
    exitCode: 0,
    text,
    json: {
      ok: true,
      reviewers: reviewers.map((r) => ({ name: r.name, rights: r.rights, passkeys: r.credentials.length, revoked: r.revoked })),
    },
  };
}

/** `twinlock reviewer revoke NAME`: their passkeys sign nothing more, and receipts they signed stop counting. */
export async function runReviewerRevoke(name: string, o: CommonOptions): Promise<CommandResult> {
  const r = await revokeReviewer(await trustHomeOption(o), name);
  return {
    exitCode: 0,
    text: `revoked ${r.name}: their passkeys no longer sign in or sign, and their receipts no longer count`,
    json: { ok: true, name: r.name },
  };
}

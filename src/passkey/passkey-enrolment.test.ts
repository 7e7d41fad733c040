import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RefusalError, UsageError } from "../errors/errors.js";
import { type GateHome, openGateHome } from "../home/gate-home.js";
import { createInvitation, finishEnrolment, INVITATION_TTL_MS, type RelyingParty, startEnrolment } from "./passkey-enrolment.js";
import { findCredential, listReviewers, reviewerRegistryFile, revokeReviewer } from "./reviewer-registry.js";
import { type AuthenticatorTweaks, SoftwareAuthenticator, type SoftwareKeyType } from "./software-authenticator.js";
import { verifyWebAuthnReceipt } from "./verify-webauthn-assertion.js";
import { receiptChallenge } from "./webauthn-challenge.js";
import { webauthnSignatureOf } from "./webauthn-signature.js";

const RP: RelyingParty = { id: "localhost", name: "twinlock", origin: "http://localhost:7420" };
const T0 = new Date("2025-06-01T12:00:00.000Z");

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newHome(): GateHome {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-passkey-"));
  dirs.push(dir);
  return openGateHome(path.join(dir, "home"));
}

/** The `code` of the RefusalError a promise rejects with. */
async function refusalCode(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RefusalError) return error.details.code;
    throw error;
  }
  return "no refusal";
}

/** Invite `name`, start the enrolment and answer it with `a`: everything but the finish. */
async function begin(home: GateHome, a: SoftwareAuthenticator, name = "alice", tweaks: AuthenticatorTweaks = {}) {
  const { token } = await createInvitation(home, name, "review,consent", T0);
  const { options, challenge } = await startEnrolment(home, token, RP, T0);
  return { token, options, challenge, response: a.register(options, RP.origin, tweaks) };
}

async function enrol(home: GateHome, a: SoftwareAuthenticator, name = "alice") {
  const { token, challenge, response } = await begin(home, a, name);
  return { token, ...(await finishEnrolment(home, token, response, challenge, RP, T0)) };
}

describe("passkey enrolment", () => {
  for (const type of ["ES256", "EdDSA", "RS256"] as SoftwareKeyType[]) {
    it(`enrols an ${type} passkey, whose receipt signature then verifies offline against the enrolment`, async () => {
      const home = newHome();
      const a = new SoftwareAuthenticator(type);
      const { reviewer, credential } = await enrol(home, a);
      expect(reviewer).toMatchObject({ name: "alice", rights: ["review", "consent"], revoked: false });
      expect(credential).toMatchObject({ credential_id: a.credentialId, public_key: a.keyLine, rp_id: "localhost", origins: [RP.origin] });

      const found = findCredential(home, a.credentialId);
      expect(found?.reviewer.name).toBe("alice");
      const receipt = { kind: "review", run_id: "run_0123456789abcdef", reviewer: "alice", decision: "approved", revision: 1 };
      const assertion = a.assert(receiptChallenge(receipt), { rpId: RP.id, origin: RP.origin });
      const signed = { ...receipt, signature: webauthnSignatureOf(assertion, found?.credential.public_key ?? "", "alice") };
      expect(verifyWebAuthnReceipt(signed, found?.credential ?? credential)).toEqual({ ok: true });
      expect(verifyWebAuthnReceipt({ ...signed, decision: "declined" }, credential).ok).toBe(false);
    });
  }

  it("asks the browser for user verification, no attestation, a discoverable credential and ES256, EdDSA or RS256", async () => {
    const home = newHome();
    const { token } = await createInvitation(home, "alice", ["review"], T0);
    const { options } = await startEnrolment(home, token, RP, T0);
    expect(options.authenticatorSelection).toMatchObject({ userVerification: "required", residentKey: "preferred" });
    expect(options.attestation).toBe("none");
    expect(options.pubKeyCredParams.map((p) => p.alg)).toEqual([-7, -8, -257]);
    expect(options.rp).toEqual({ id: "localhost", name: "twinlock" });
    expect(options.user.name).toBe("alice");
  });

  it("keeps only the token's sha256: no file of the home contains the token", async () => {
    const home = newHome();
    const { token } = await enrol(home, new SoftwareAuthenticator());
    const { token: pending } = await createInvitation(home, "bob", "review", T0);
    const files = (function walk(dir: string): string[] {
      return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
        e.isDirectory() ? walk(path.join(dir, e.name)) : [path.join(dir, e.name)],
      );
    })(home.dir);
    expect(files).toContain(reviewerRegistryFile(home));
    for (const file of files) {
      const text = readFileSync(file, "latin1");
      expect(text.includes(token) || text.includes(pending), file).toBe(false);
    }
    expect(statSync(reviewerRegistryFile(home)).mode & 0o777).toBe(0o600);
  });

  it("accepts a link until 15 minutes after the invitation and refuses it from then on", async () => {
    const home = newHome();
    const { token, expiresAt } = await createInvitation(home, "alice", "review", T0);
    expect(expiresAt).toBe(new Date(T0.getTime() + INVITATION_TTL_MS).toISOString());
    await startEnrolment(home, token, RP, new Date(T0.getTime() + INVITATION_TTL_MS - 1));
    expect(await refusalCode(startEnrolment(home, token, RP, new Date(T0.getTime() + INVITATION_TTL_MS)))).toBe("expired-invitation");
  });

  it("refuses a finish after the link expired, even when the enrolment started in time", async () => {
    const home = newHome();
    const { token, challenge, response } = await begin(home, new SoftwareAuthenticator());
    const late = new Date(T0.getTime() + INVITATION_TTL_MS + 1);
    expect(await refusalCode(finishEnrolment(home, token, response, challenge, RP, late))).toBe("expired-invitation");
    expect(listReviewers(home)).toEqual([]);
  });

  it("uses a link once: starting or finishing again with it is refused", async () => {
    const home = newHome();
    const a = new SoftwareAuthenticator();
    const { token, challenge, response } = await begin(home, a);
    await finishEnrolment(home, token, response, challenge, RP, T0);
    expect(await refusalCode(startEnrolment(home, token, RP, T0))).toBe("used-invitation");
    expect(await refusalCode(finishEnrolment(home, token, response, challenge, RP, T0))).toBe("used-invitation");
  });

  it("refuses an unknown token", async () => {
    const home = newHome();
    expect(await refusalCode(startEnrolment(home, "not-a-token", RP, T0))).toBe("unknown-invitation");
  });

  it("enrols exactly one of two finishes racing on one link", async () => {
    const home = newHome();
    const { token } = await createInvitation(home, "alice", "review", T0);
    const { options, challenge } = await startEnrolment(home, token, RP, T0);
    const [one, two] = [new SoftwareAuthenticator(), new SoftwareAuthenticator("EdDSA")];
    const results = await Promise.allSettled([
      finishEnrolment(home, token, one.register(options, RP.origin), challenge, RP, T0),
      finishEnrolment(home, token, two.register(options, RP.origin), challenge, RP, T0),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    const lost = results.find((r) => r.status === "rejected");
    expect(lost?.status === "rejected" && (lost.reason as RefusalError).details.code).toBe("used-invitation");
    expect(listReviewers(home).map((r) => r.credentials.length)).toEqual([1]);
  });

  it("refuses a registration without user verification, and leaves the link usable", async () => {
    const home = newHome();
    const a = new SoftwareAuthenticator();
    const { token, challenge, response, options } = await begin(home, a, "alice", { userVerified: false });
    expect(await refusalCode(finishEnrolment(home, token, response, challenge, RP, T0))).toBe("bad-registration");
    const retry = await finishEnrolment(home, token, a.register(options, RP.origin), challenge, RP, T0);
    expect(retry.reviewer.name).toBe("alice");
  });

  it("refuses a registration made for another origin, RP ID or type", async () => {
    for (const tweaks of [{ origin: "http://evil.example" }, { rpId: "evil.example" }, { type: "webauthn.get" }]) {
      const home = newHome();
      const { token, challenge, response } = await begin(home, new SoftwareAuthenticator(), "alice", tweaks);
      expect(await refusalCode(finishEnrolment(home, token, response, challenge, RP, T0)), JSON.stringify(tweaks)).toBe("bad-registration");
    }
  });

  it("refuses a registration answering another challenge than the one last started", async () => {
    const home = newHome();
    const a = new SoftwareAuthenticator();
    const { token, challenge, response } = await begin(home, a);
    await startEnrolment(home, token, RP, T0); // started again: a new challenge replaces the first
    expect(await refusalCode(finishEnrolment(home, token, response, challenge, RP, T0))).toBe("enrolment-not-started");
    const fresh = await createInvitation(home, "bob", "review", T0);
    expect(await refusalCode(finishEnrolment(home, fresh.token, response, challenge, RP, T0))).toBe("enrolment-not-started");
  });

  it("refuses a name already enrolled, even after revocation", async () => {
    const home = newHome();
    await enrol(home, new SoftwareAuthenticator());
    expect(await refusalCode(createInvitation(home, "alice", "review", T0))).toBe("duplicate-reviewer");
    await revokeReviewer(home, "alice", T0);
    expect(await refusalCode(createInvitation(home, "alice", "review", T0))).toBe("duplicate-reviewer");
  });

  it("refuses a passkey already enrolled for another reviewer", async () => {
    const home = newHome();
    const a = new SoftwareAuthenticator();
    await enrol(home, a, "alice");
    const { token, challenge, response } = await begin(home, a, "bob");
    expect(await refusalCode(finishEnrolment(home, token, response, challenge, RP, T0))).toBe("duplicate-credential");
  });

  it("replaces a pending invitation for the same name: the old link stops working", async () => {
    const home = newHome();
    const first = await createInvitation(home, "alice", "review", T0);
    const second = await createInvitation(home, "alice", "review,stop", T0);
    expect(second.replaced).toBe(true);
    expect(await refusalCode(startEnrolment(home, first.token, RP, T0))).toBe("unknown-invitation");
    await startEnrolment(home, second.token, RP, T0);
  });

  it("refuses bad rights and bad names with the valid form", async () => {
    const home = newHome();
    await expect(createInvitation(home, "alice", "review,freeze", T0)).rejects.toThrow(/freeze belongs to planner agents/);
    await expect(createInvitation(home, "alice", "admin", T0)).rejects.toThrow(/rights are review, consent, apply, stop/);
    await expect(createInvitation(home, "alice", "", T0)).rejects.toThrow(UsageError);
    for (const name of ["../x", "", "a b", "-alice", "x".repeat(65)])
      await expect(createInvitation(home, name, "review", T0), name).rejects.toThrow(/reviewer name/);
  });

  it("revokes a reviewer: their passkey is no longer found (except for history), and an unknown name is refused", async () => {
    const home = newHome();
    const a = new SoftwareAuthenticator();
    await enrol(home, a);
    const revoked = await revokeReviewer(home, "alice", T0);
    expect(revoked).toMatchObject({ revoked: true, revoked_at: T0.toISOString() });
    expect(findCredential(home, a.credentialId)).toBeUndefined();
    expect(findCredential(home, a.credentialId, { includeRevoked: true })?.reviewer.name).toBe("alice");
    expect(await refusalCode(revokeReviewer(home, "nobody", T0))).toBe("unknown-reviewer");
  });

  it("refuses to read a damaged registry instead of treating it as empty", async () => {
    const home = newHome();
    await enrol(home, new SoftwareAuthenticator());
    writeFileSync(reviewerRegistryFile(home), "{}\n");
    expect(() => listReviewers(home)).toThrow(/damaged/);
    await expect(createInvitation(home, "bob", "review", T0)).rejects.toThrow(/damaged/);
  });
});

import { existsSync } from "node:fs";
import path from "node:path";
import { exportedTrustOf } from "../../ci/exported-trust.js";
import { signTrust } from "../../ci/signed-trust.js";
import { canonicalJson } from "../../crypto/canonical-hash.js";
import { RefusalError, UsageError } from "../../errors/errors.js";
import { declaresDryRun } from "../../gate/dry-run-needed.js";
import { type GateHome, homeLabel, resolveHomeDir } from "../../home/gate-home.js";
import { addPinner, listPinners, listPins, loadPinnedPolicy, type Pin, pinSuite, unpinSuite } from "../../home/suite-pins.js";
import { addTrustedGateKey, listTrustedGateKeys } from "../../home/trusted-gate-keys.js";
import { naturalCompare } from "../../input/natural-order.js";
import { parseText } from "../../input/parse-input.js";
import { atomicWriteFile } from "../../store/atomic-write.js";
import { findSuiteRoot } from "../../suite/find-suite-root.js";
import type { Prompt } from "../../suite/prompt.js";
import type { SuiteConfig } from "../../suite/suite-config.js";
import { ensureGateKey } from "../../trust/gate-key.js";
import { keyOption } from "../../trust/key-option.js";
import { publicKeyLine } from "../../trust/keys.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { homeOption, trustHomeOption, usesTeamStore } from "../home-option.js";

/** `twinlock trust pin --suite DIR [--allow-unsigned]`: record the suite the gate judges runs by. */
export async function runTrustPin(o: CommonOptions & { suite?: string; allowUnsigned?: boolean; key?: string }): Promise<CommandResult> {
  // An existing home is opened first, so a key that may not pin is refused before the suite is read.
  let opened: GateHome | undefined = usesTeamStore(o)
    ? await trustHomeOption(o)
    : existsSync(resolveHomeDir(o.home))
      ? homeOption(o)
      : undefined;
  const openLater = () => {
    opened = homeOption(o, { create: true });
    return opened;
  };
  const { pin, replaced, firstPinner, config, suite } = await pinSuite(opened ?? openLater, {
    suiteDir: findSuiteRoot({ suite: o.suite }),
    allowUnsigned: o.allowUnsigned === true,
    key: keyOption(o.key),
  });
  const home = opened as GateHome;
  const text = [
    `pinned ${pin.suite_id} at ${pin.root} in ${homeLabel(home)}`,
    `  twinlock.yaml ${pin.config_sha256}`,
    // What the gate will enforce from now on, to check against what you reviewed.
    ...policyLines(config),
    // Each executor's own rules, as the gate will read them: a rule misspelt or left out shows here.
    `  ${Object.keys(pin.pairs).length} pairs:`,
    ...Object.entries(pin.pairs)
      .sort(([a], [b]) => naturalCompare(a, b))
      .map(([p, e]) => `    ${p}→${e}  ${executorRules(suite.byId.get(e))}`),
    ...(replaced
      ? [
          samePin(replaced, pin)
            ? `  the suite is as pinned on ${replaced.pinned_at}: the pin is renewed (twinlock.yaml ${replaced.config_sha256})`
            : `  replaces the pin of ${replaced.pinned_at}: ${replaced.suite_id} at ${replaced.root} (twinlock.yaml ${replaced.config_sha256})`,
          ...(replaced.root !== pin.root
            ? [`  the pin moved from ${replaced.root}: runs begun on that folder are refused from now on (their suite is pinned here)`]
            : []),
        ]
      : []),
    // A pinner who is no reviewer is fine, but a list of someone else's (or placeholder) keys means nobody here can decide.
    ...(!pin.allow_unsigned && !deciders(config).some((r) => r.public_key === pin.pinned_by)
      ? [
          `  note: the key that pinned is not one of the suite's reviewers (${
            deciders(config)
              .map((r) => r.name)
              .join(", ") || "none listed"
          }); only they can review and consent: check their public_key lines are their real keys`,
        ]
      : []),
    ...(firstPinner
      ? [
          `  first pin of ${home.shared ? "this team store" : "this gate home"}: key ${pin.pinned_by.slice(0, 28)}… is now its pinner; only a pinner's key can pin, re-pin or unpin`,
        ]
      : []),
    ...(pin.allow_unsigned ? ["UNSIGNED: this suite does not require signed receipts; receipts will prove nothing about who decided"] : []),
  ].join("\n");
  return { exitCode: 0, text, json: { ok: true, home: home.dir, pin, replaced: replaced ?? null, first_pinner: firstPinner } };
}

/** The listed keys, not revoked, that may review or consent. */
function deciders(config: SuiteConfig): NonNullable<SuiteConfig["reviewers"]> {
  const revoked = new Set(config.revoked ?? []);
  return (config.reviewers ?? []).filter(
    (r) => !revoked.has(r.public_key) && (r.rights.includes("review") || r.rights.includes("consent")),
  );
}

/** What the gate reads from an executor to admit it: the modes it may run in, and whether a dry run comes first. */
function executorRules(executor: Prompt | undefined): string {
  const modes = executor?.allowedModes.length ? executor.allowedModes.join(", ") : "any (no allowed_modes)";
  return `modes ${modes}; ${declaresDryRun(executor) ? "a passed dry run first in APPLY modes" : "no dry run required"}`;
}

/** `twinlock trust list`: the pinned suites. */
export async function runTrustList(o: CommonOptions): Promise<CommandResult> {
  const home = await trustHomeOption(o);
  const pins = listPins(home);
  const pinners = listPinners(home);
  const text =
    (pinners.length
      ? `pinners: ${pinners.join(", ")}\n`
      : "no pinner yet: the first `twinlock trust pin --key FILE` claims this home — make it yourself, before any agent can\n") +
    (pins.length === 0
      ? `no suite is pinned in ${home.dir}; pin one with \`twinlock trust pin --suite DIR --key FILE\``
      : pins
          .map(
            (p) =>
              `${p.suite_id}  ${p.root}  ${p.config_sha256.slice(0, 19)}…  ${Object.keys(p.pairs).length} pairs  pinned ${p.pinned_at} by ${p.pinned_by}${p.allow_unsigned ? "  UNSIGNED" : ""}`,
          )
          .join("\n"));
  return { exitCode: 0, text, json: { ok: true, home: home.dir, pinners, pins } };
}

/** `twinlock trust unpin SUITE_ID`. */
export async function runTrustUnpin(suiteId: string, o: CommonOptions & { key?: string }): Promise<CommandResult> {
  const home = await trustHomeOption(o);
  const removed = await unpinSuite(home, parseText(suiteId, "suite ID", 200), keyOption(o.key));
  return {
    exitCode: 0,
    text: `unpinned ${removed.suite_id} (${removed.root}); its runs are refused until it is pinned again`,
    json: { ok: true, removed },
  };
}

/** `twinlock trust add-pinner PUBLIC_KEY --key FILE`: let another person's key change the pins. */
export async function runTrustAddPinner(publicKey: string, o: CommonOptions & { key?: string }): Promise<CommandResult> {
  const home = await trustHomeOption(o);
  await addPinner(home, parseText(publicKey.trim(), "public key", 200), keyOption(o.key));
  return { exitCode: 0, text: `added pinner ${publicKey.trim()} to ${homeLabel(home)}`, json: { ok: true, pinners: listPinners(home) } };
}

/** The policy a pin makes the gate enforce, one line each, as twinlock read it. */
function policyLines(config: SuiteConfig): string[] {
  const p = config.policies ?? {};
  return [
    `  policy: signed receipts ${p.require_signed_receipts === true ? "required" : "NOT required"}; ${p.required_approvals ?? 1} approval(s) per revision; separate duties ${p.separate_duties === true ? "on" : "off"}; consent expires ${p.consent_expiry ?? "never"}; handoff format ${config.handoff?.format ?? "twinlock"}`,
    ...(config.reviewers ?? []).map((r) => `  reviewer ${r.name} ${r.public_key.slice(0, 20)}… may ${r.rights.join(", ")}`),
    ...(config.revoked?.length ? [`  revoked: ${config.revoked.length} key(s)`] : []),
    ...(config.prompts ? [`  prompts: ${config.prompts.join(", ")}${config.exclude ? ` minus ${config.exclude.join(", ")}` : ""}`] : []),
  ];
}

/** Whether a re-pin records exactly what the pin it replaces did: all of it but when and by whom. */
function samePin(a: Pin, b: Pin): boolean {
  const what = ({ pinned_at: _at, pinned_by: _by, ...rest }: Pin) => canonicalJson(rest);
  return what(a) === what(b);
}

/**
 * `twinlock trust gate-key`: the gate's public key (made once if the home or
 * team store has none), for a person to pin where evidence is checked: the
 * `gate_keys:` list of twinlock.yaml, which verify, verify-attestation and
 * (through the pin) import and attest read.
 */
export async function runTrustGateKey(o: CommonOptions): Promise<CommandResult> {
  const home = await trustHomeOption(o, { create: true });
  const gate = await ensureGateKey(home);
  const name = home.shared ? "team-store" : "gate-home";
  const text = [
    gate.publicKey,
    `the signing key of ${homeLabel(home)}: it signs every record the gate makes, every checkpoint head and every export; pin it in twinlock.yaml (beside reviewers:) where its evidence is checked:`,
    "gate_keys:",
    `  - name: ${name}`,
    `    public_key: ${gate.publicKey}`,
  ].join("\n");
  return { exitCode: 0, text, json: { ok: true, gate_key: gate.publicKey, home: homeLabel(home) } };
}

/** `twinlock trust add-gate-key PUBLIC_KEY --name NAME --key FILE`: take runs signed by another gate (import, attest) in this home. */
export async function runTrustAddGateKey(publicKey: string, o: CommonOptions & { name?: string; key?: string }): Promise<CommandResult> {
  const home = await trustHomeOption(o);
  const name = parseText(o.name ?? "gate", "--name", 200);
  const list = await addTrustedGateKey(home, { name, publicKey: parseText(publicKey.trim(), "gate key", 200) }, keyOption(o.key));
  return {
    exitCode: 0,
    text: `${homeLabel(home)} now takes runs signed by gate ${name} (${publicKey.trim()}); ${list.length} gate key${list.length === 1 ? "" : "s"} trusted besides its own`,
    json: { ok: true, gate_keys: list },
  };
}

/**
 * `twinlock trust export --out FILE --key PINNER.key [--suite-id ID]`: what
 * CI needs to judge a run offline, in one file signed by a pinner: the pinned
 * suite's policies and reviewer keys, every enrolled passkey with its rights,
 * the revocations, and the gate keys (this gate's own and those it trusts).
 * Commit it where the agent cannot write; re-export after an enrolment or a
 * revocation, and the diff shows who changed.
 */
export async function runTrustExport(
  o: CommonOptions & { out?: string; key?: string; suiteId?: string; ciIdentity?: string },
): Promise<CommandResult> {
  if (o.out === undefined) throw new UsageError("trust export needs --out FILE, e.g. --out twinlock-trust.json");
  const key = keyOption(o.key);
  if (!key) throw new UsageError("trust export signs with a pinner's key: pass --key FILE (or set TWINLOCK_KEY)");
  const home = await trustHomeOption(o);
  const signer = publicKeyLine(key);
  if (!listPinners(home).includes(signer))
    throw new RefusalError(
      `the key ${signer.slice(0, 28)}… is not a pinner of ${homeLabel(home)}; only a pinner's key signs what CI trusts (a pinner adds one with \`twinlock trust add-pinner\`)`,
      { attack: "trust-export-by-non-pinner" },
    );
  const pins = listPins(home);
  const pin = o.suiteId === undefined ? (pins.length === 1 ? pins[0] : undefined) : pins.find((p) => p.suite_id === o.suiteId);
  if (!pin)
    throw new UsageError(
      `${o.suiteId === undefined ? `${homeLabel(home)} pins ${pins.length} suites` : `no suite ${o.suiteId} is pinned in ${homeLabel(home)}`}; pass --suite-id ID (pinned: ${pins.map((p) => p.suite_id).join(", ") || "none"})`,
    );
  const gate = await ensureGateKey(home);
  const trust = exportedTrustOf(
    loadPinnedPolicy(home, { root: pin.root, suite_id: pin.suite_id }),
    homeLabel(home),
    new Date(),
    gate.publicKey,
    listTrustedGateKeys(home),
    o.ciIdentity === undefined ? undefined : parseText(o.ciIdentity, "--ci-identity", 200),
  );
  const out = path.resolve(o.out);
  atomicWriteFile(out, `${JSON.stringify(signTrust(trust, key), null, 1)}\n`);
  const passkeys = trust.reviewers.filter((r) => r.webauthn).length;
  const text = [
    `wrote ${out}: suite ${trust.suite_id}, ${trust.reviewers.length - passkeys} reviewer key${trust.reviewers.length - passkeys === 1 ? "" : "s"}, ${passkeys} passkey${passkeys === 1 ? "" : "s"}, ${trust.revoked.length} revoked, ${trust.gate_keys?.length ?? 0} gate key${trust.gate_keys?.length === 1 ? "" : "s"}; signed by pinner ${signer}`,
    ...trust.reviewers.map(
      (r) =>
        `  ${r.name}: ${r.webauthn ? "passkey" : "key"} ${r.public_key.slice(0, 28)}… (${r.rights.join(", ")})${trust.ci_identity?.name === r.name ? ", the CI identity: CI closes verified with it after verify passes" : ""}`,
    ),
    `commit it on the protected branch with the pinner's public key, and check runs with \`twinlock verify RUN --trust ${path.basename(out)} --pinner-key PINNER.pub --git-range BASE...HEAD\``,
  ].join("\n");
  return {
    exitCode: 0,
    text,
    json: {
      ok: true,
      out,
      signed_by: signer,
      suite_id: trust.suite_id,
      reviewers: trust.reviewers.length,
      passkeys,
      ci_identity: trust.ci_identity?.name ?? null,
    },
  };
}

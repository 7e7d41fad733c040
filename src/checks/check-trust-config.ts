import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { readConfigText, type Suite } from "../suite/load-suite.js";
import { CONFIG_FILE } from "../suite/suite-config.js";
import { parsePublicKeyLine } from "../trust/keys.js";

/**
 * The policy block and the keys of `twinlock.yaml` (issue 5): every public
 * key is a real Ed25519 key, names and keys are unique, revoked entries are
 * keys, and the policy can be met by the reviewers listed.
 */
export function checkTrustConfig(suite: Suite): Diagnostic[] {
  const c = suite.config;
  const reviewers = c.reviewers ?? [];
  const policies = c.policies ?? {};
  // Positions only, read on the first problem: loadSuite has already refused a special file here.
  let lines: string[] | undefined;
  const lineOf = (needle: string) => {
    lines ??= configLines(suite.root);
    const i = lines.findIndex((l) => l.includes(needle));
    return i === -1 ? 1 : i + 1;
  };
  const out: Diagnostic[] = [];
  const problem = (needle: string, message: string, severity: Diagnostic["severity"] = "error") =>
    out.push({ code: "CONFIG_INVALID", severity, file: CONFIG_FILE, line: lineOf(needle), col: 1, message });

  const names = new Set<string>();
  const keys = new Set<string>();
  for (const r of reviewers) {
    if (!parsePublicKeyLine(r.public_key))
      problem(r.public_key, `reviewer ${r.name}: public_key is not a valid Ed25519 key; paste the line printed by \`twinlock keygen\``);
    if (names.has(r.name)) problem(`name: ${r.name}`, `reviewer name ${r.name} is listed twice; names must be unique`);
    if (keys.has(r.public_key))
      problem(r.public_key, `reviewer ${r.name}: this public key is listed for another reviewer too; each person has their own key`);
    names.add(r.name);
    keys.add(r.public_key);
    if ((c.revoked ?? []).includes(r.public_key))
      problem(
        r.public_key,
        `reviewer ${r.name}'s key is revoked; their receipts will be refused — remove the reviewer or give them a new key`,
        "warning",
      );
  }
  for (const k of c.revoked ?? [])
    if (!parsePublicKeyLine(k)) problem(k, `revoked entry ${k.slice(0, 24)}… is not an Ed25519 public key line`);
  const active = reviewers.filter((r) => !(c.revoked ?? []).includes(r.public_key));
  if (policies.require_signed_receipts) {
    for (const right of ["review", "consent", "freeze"] as const) {
      if (!active.some((r) => r.rights.includes(right)))
        problem(
          "require_signed_receipts",
          right === "freeze"
            ? "require_signed_receipts is true but no unrevoked key has the freeze right, so no handoff could be frozen; list the planner agent's key with rights [freeze] (twinlock keygen --rights freeze)"
            : `require_signed_receipts is true but no unrevoked reviewer has the ${right} right; add one (twinlock keygen)`,
        );
    }
    if (!active.some((r) => r.rights.includes("stop")))
      problem(
        "require_signed_receipts",
        "no unrevoked reviewer has the stop right, so a raised !STOP could never be lifted; give a person the stop right",
        "warning",
      );
  }
  const needed = policies.required_approvals ?? 1;
  const canReview = active.filter((r) => r.rights.includes("review")).length;
  if (needed > 1 && policies.require_signed_receipts && canReview < needed) {
    problem(
      "required_approvals",
      `required_approvals is ${needed} but only ${canReview} unrevoked reviewer(s) have the review right; no plan could ever be approved`,
    );
  }
  return out;
}

function configLines(root: string): string[] {
  try {
    return (readConfigText(root) ?? "").split("\n");
  } catch {
    // Unreadable now: positions fall back to line 1.
    return [""];
  }
}

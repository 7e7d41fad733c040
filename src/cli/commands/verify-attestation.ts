import type { KeyObject } from "node:crypto";
import { readFileSync } from "node:fs";
import { verifyAttestation } from "../../attest/verify-attestation.js";
import { readTrustFile } from "../../ci/read-trust-file.js";
import { UsageError } from "../../errors/errors.js";
import { readRunFile } from "../../store/run-file.js";
import { requireGateSigned, trustedGateKeys } from "../../trust/gate-statement.js";
import { parsePublicKeyLine } from "../../trust/keys.js";
import type { CommandResult, CommonOptions } from "../command-result.js";

/**
 * `twinlock verify-attestation FILE… --run RUN --attester PUB… [--trust FILE]`:
 * check attestations offline — the DSSE envelope (or the one inside a
 * Sigstore bundle) signed by a trusted attester, the statement's receipt one
 * the run's verified chain recorded, its subjects what the receipt binds,
 * and, with `--trust`, the receipt's own signature (Ed25519 or passkey
 * assertion) by a trusted reviewer with the right its kind needs.
 */
export function runVerifyAttestation(
  files: string[],
  o: CommonOptions & { run: string; attester: string[]; trust?: string; pinnerKey?: string },
): CommandResult {
  if (o.attester.length === 0) throw new UsageError("give --attester FILE: the .pub of each key you trust to sign attestations");
  const attesters = new Map<string, KeyObject>();
  for (const file of o.attester) {
    const line = readText(file, "--attester").trim();
    const key = parsePublicKeyLine(line);
    if (!key) throw new UsageError(`--attester ${file} is not an ed25519: public key line (a NAME.pub from twinlock keygen)`);
    attesters.set(line, key);
  }
  if (o.trust === undefined)
    throw new UsageError(
      "give --trust FILE: the twinlock.yaml (from a branch the agent cannot write) whose gate_keys: pin the gate that recorded the run, and whose reviewers: signed its receipts",
    );
  const run = readRunFile(o.run).file;
  const reviewers = readTrustFile({ file: o.trust, cwd: process.cwd(), pinnerKey: o.pinnerKey }).config;
  // The run the receipts are held against is evidence only under a trusted gate's signatures (head and own records).
  requireGateSigned(
    run,
    trustedGateKeys(reviewers),
    `verify-attestation refused (gate signature of --run ${o.run}; trusted: the gate_keys of ${o.trust})`,
  );
  const lines: string[] = [];
  const results: Array<{ file: string; ok: boolean; detail: string }> = [];
  for (const file of files) {
    let doc: unknown;
    try {
      doc = JSON.parse(readText(file, "attestation"));
    } catch (error) {
      if (error instanceof UsageError) throw error;
      results.push({ file, ok: false, detail: "not JSON" });
      continue;
    }
    // A Sigstore bundle carries the envelope as dsseEnvelope.
    const envelope = (doc as { dsseEnvelope?: unknown } | null)?.dsseEnvelope ?? doc;
    const v = verifyAttestation(envelope, { run, attesters, reviewers });
    results.push(v.ok ? { file, ok: true, detail: "verified" } : { file, ok: false, detail: `${v.code}: ${v.reason}` });
  }
  for (const r of results) lines.push(`${r.ok ? "ok  " : "FAIL"}  ${r.file}: ${r.detail}`);
  const bad = results.filter((r) => !r.ok).length;
  lines.push(
    bad === 0
      ? `${results.length} attestation${results.length === 1 ? "" : "s"} verified${reviewers ? ", receipts signed by trusted reviewers" : " (receipts' own signatures not checked: give --trust FILE)"}`
      : `${bad} of ${results.length} attestations refused`,
  );
  return { exitCode: bad === 0 ? 0 : 1, text: lines.join("\n"), json: { ok: bad === 0, results } };
}

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, "utf8");
  } catch (error) {
    throw new UsageError(`cannot read ${what} ${file} (${(error as NodeJS.ErrnoException).code}); give the file's path`);
  }
}

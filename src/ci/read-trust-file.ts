import { readFileSync } from "node:fs";
import path from "node:path";
import { git, gitTopLevel, parseGitRange } from "../conformance/changed-files.js";
import { formatDiagnostic } from "../diagnostics/format-diagnostic.js";
import { RefusalError, UsageError } from "../errors/errors.js";
import { parseSuiteConfig } from "../suite/load-suite.js";
import type { SuiteConfig } from "../suite/suite-config.js";
import { looksLikeSignedTrust, MAX_TRUST_FILE_BYTES, openSignedTrust, pinnerKeysOf } from "./signed-trust.js";

/** The trusted reviewers for CI, and where they were read from. */
export interface TrustFile {
  config: SuiteConfig;
  /** Where the bytes came from: a file, or `A:path` of the base commit. */
  source: string;
  /** A signed trust file's CI identity (`trust export --ci-identity`): the reviewer CI closes verified as. */
  ciIdentity?: { name: string; public_key: string };
}

/**
 * Read what CI trusts: a twinlock.yaml-shaped file with a `reviewers:` list,
 * or a signed trust file (`twinlock trust export`: the gate's reviewers with
 * their enrolled passkeys, revocations and gate keys) whose signature must
 * check under the pinner key in `pinnerKey`. With a git range `A...B` (or
 * `A..B`) both are read from the base commit A (`git show A:PATH`), never
 * from the change under test, and a working-tree copy that differs from A's
 * is refused: a change must not choose who may approve it.
 */
export function readTrustFile(input: {
  file: string;
  gitRange?: string;
  cwd: string;
  pinnerKey?: string;
  /** Where the trust file was looked for when no --trust was given (the checkout's top, or --suite DIR). */
  defaultFrom?: string;
}): TrustFile {
  const trust = readDefaultable(input);
  const text = trust.bytes.toString("utf8");
  if (looksLikeSignedTrust(text)) {
    if (input.pinnerKey === undefined)
      throw new UsageError(
        `the trust file ${trust.source} is a signed trust file; give --pinner-key FILE, the public key of the pinner who exported it, committed where the agent cannot write`,
      );
    const pinner = readPinnedBytes(input.pinnerKey, "--pinner-key", input);
    const pinners = pinnerKeysOf(pinner.bytes.toString("utf8"), pinner.source);
    const opened = openSignedTrust(text, trust.source, pinners);
    return {
      config: opened.config,
      source: trust.source,
      ...(opened.trust.ci_identity ? { ciIdentity: opened.trust.ci_identity } : {}),
    };
  }
  if (text.includes("twinlock-export-trust/1"))
    throw new RefusalError(
      `the trust file ${trust.source} is the trust.json beside an export, which whoever wrote the export could write; give CI a trust file signed by a pinner (\`twinlock trust export --out FILE --key PINNER.key\`) with --pinner-key`,
      { attack: "unsigned-export-trust" },
    );
  if (input.pinnerKey !== undefined)
    throw new UsageError(
      `--pinner-key checks a signed trust file, and ${trust.source} is a twinlock.yaml; drop --pinner-key, or give the signed file`,
    );
  const { config, diagnostics } = parseSuiteConfig(text);
  if (diagnostics[0])
    throw new UsageError(`the trust file ${trust.source} is invalid (${formatDiagnostic(diagnostics[0])}); fix it on the base branch`);
  if (!config.reviewers?.length)
    throw new UsageError(`the trust file ${trust.source} lists no reviewers; add a reviewers: list with their public keys`);
  return { config, source: trust.source };
}

/**
 * The trust file's bytes; one not found where verify looked by default says
 * where that was and which flags choose another, not `--trust` alone.
 */
function readDefaultable(input: { file: string; gitRange?: string; cwd: string; defaultFrom?: string }): { bytes: Buffer; source: string } {
  try {
    return readPinnedBytes(input.file, "--trust", input);
  } catch (error) {
    if (
      input.defaultFrom === undefined ||
      !(error instanceof UsageError) ||
      !/^cannot read --trust |is not in that commit/.test(error.message)
    )
      throw error;
    const where = input.gitRange === undefined ? "" : ` in the base commit ${parseGitRange(input.gitRange).from}`;
    throw new UsageError(
      `no twinlock.yaml at ${input.file}${where}: with no --trust, verify reads the twinlock.yaml of ${input.defaultFrom}; give --suite DIR, the folder that holds the suite's twinlock.yaml (or --trust FILE, the reviewers file)`,
      { cause: error },
    );
  }
}

/**
 * The bytes of a file CI trusts: from the base commit with a git range (and
 * the working tree's copy, if any, must be the same), else from the file.
 */
function readPinnedBytes(given: string, option: string, input: { gitRange?: string; cwd: string }): { bytes: Buffer; source: string } {
  const abs = path.resolve(input.cwd, given);
  let bytes: Buffer;
  let source = abs;
  if (input.gitRange !== undefined) {
    const { from } = parseGitRange(input.gitRange);
    const top = gitTopLevel(input.cwd);
    const rel = path.relative(top, abs).split(path.sep).join("/");
    if (rel.startsWith("..") || path.isAbsolute(rel))
      throw new UsageError(`${option} ${given} is outside the repository ${top}; with --git-range it is read from the base commit`);
    bytes = git(top, ["show", `${from}:${rel}`]);
    source = `${from}:${rel}`;
    let working: Buffer | undefined;
    try {
      working = readFileSync(abs);
    } catch {
      working = undefined;
    }
    if (working !== undefined && !working.equals(bytes))
      throw new RefusalError(
        `the ${option === "--trust" ? "trust file" : "pinner key file"} ${rel} in the working tree differs from the base commit's (${from}:${rel}): the change under test edits who may approve it; review that change on its own and merge it first`,
        { attack: "trust-from-change" },
      );
  } else {
    try {
      bytes = readFileSync(abs);
    } catch (error) {
      throw new UsageError(
        `cannot read ${option} ${given} (${(error as NodeJS.ErrnoException).code}); give the ${option === "--trust" ? "reviewers file" : "pinner's public key file"} taken from the protected base branch`,
        { cause: error },
      );
    }
  }
  if (bytes.length > MAX_TRUST_FILE_BYTES)
    throw new UsageError(`${option} ${source} is over ${MAX_TRUST_FILE_BYTES} bytes; give the file the gate wrote`);
  return { bytes, source };
}

import { readFileSync } from "node:fs";
import path from "node:path";
import { git, gitTopLevel, parseGitRange } from "../conformance/changed-files.js";
import { formatDiagnostic } from "../diagnostics/format-diagnostic.js";
import { RefusalError, UsageError } from "../errors/errors.js";
import { parseSuiteConfig } from "../suite/load-suite.js";
import type { SuiteConfig } from "../suite/suite-config.js";

/** The trusted reviewers for CI, and where they were read from. */
export interface TrustFile {
  config: SuiteConfig;
  /** Where the bytes came from: a file, or `A:path` of the base commit. */
  source: string;
}

/**
 * Read the trusted reviewers (a twinlock.yaml-shaped file with a `reviewers:`
 * list). With a git range `A...B` (or `A..B`) the bytes are those of the base commit A
 * (`git show A:PATH`), never the change under test's, and a working-tree copy
 * that differs from A's is refused: a change must not choose who may approve it.
 */
export function readTrustFile(input: { file: string; gitRange?: string; cwd: string }): TrustFile {
  const abs = path.resolve(input.cwd, input.file);
  let bytes: Buffer;
  let source = abs;
  if (input.gitRange !== undefined) {
    const { from } = parseGitRange(input.gitRange);
    const top = gitTopLevel(input.cwd);
    const rel = path.relative(top, abs).split(path.sep).join("/");
    if (rel.startsWith("..") || path.isAbsolute(rel))
      throw new UsageError(`--trust ${input.file} is outside the repository ${top}; with --git-range it is read from the base commit`);
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
        `the trust file ${rel} in the working tree differs from the base commit's (${from}:${rel}): the change under test edits who may approve it; review that change on its own and merge it first`,
        { attack: "trust-from-change" },
      );
  } else {
    try {
      bytes = readFileSync(abs);
    } catch (error) {
      throw new UsageError(
        `cannot read --trust ${input.file} (${(error as NodeJS.ErrnoException).code}); give the reviewers file taken from the protected base branch`,
        { cause: error },
      );
    }
  }
  const { config, diagnostics } = parseSuiteConfig(bytes.toString("utf8"));
  if (diagnostics[0])
    throw new UsageError(`the trust file ${source} is invalid (${formatDiagnostic(diagnostics[0])}); fix it on the base branch`);
  if (!config.reviewers?.length)
    throw new UsageError(`the trust file ${source} lists no reviewers; add a reviewers: list with their public keys`);
  return { config, source };
}

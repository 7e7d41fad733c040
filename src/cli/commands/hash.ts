import { hashHandoff } from "../../handoff/hash-handoff.js";
import { parseHashOption } from "../../input/parse-input.js";
import type { CommandResult, CommonOptions } from "../command-result.js";

/** `twinlock hash DIR [--expect H]`: the handoff hash of SPEC §4, computed here. */
export async function runHash(dir: string, options: CommonOptions & { expect?: string }): Promise<CommandResult> {
  const expect = options.expect === undefined ? undefined : parseHashOption(options.expect, "--expect");
  const digest = await hashHandoff(dir);
  const bytes = digest.files.reduce((n, f) => n + f.size, 0);
  const ok = expect === undefined || expect === digest.hash;
  const text = ok ? digest.hash : `${digest.hash}\nmismatch: expected ${expect}, computed ${digest.hash}`;
  return {
    exitCode: ok ? 0 : 1,
    text,
    json: { ok, hash: digest.hash, files: digest.files, bytes, ...(expect ? { expected: expect } : {}) },
  };
}

import { mkdirSync } from "node:fs";
import path from "node:path";
import { attestRun } from "../../attest/attest-run.js";
import { UsageError } from "../../errors/errors.js";
import { atomicWriteFile } from "../../store/atomic-write.js";
import { keyOption } from "../../trust/key-option.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";

/** `twinlock attest RUN [--out DIR] [--key FILE]`: each receipt as a DSSE-signed in-toto statement and a Sigstore bundle. */
export async function runAttest(runFile: string, o: CommonOptions & { out?: string; key?: string }): Promise<CommandResult> {
  const r = await attestRun({ store: storeOption(o), run: runFile, key: keyOption(o.key) });
  const out = path.resolve(o.out ?? path.join(path.dirname(path.resolve(runFile)), "attestations"));
  try {
    mkdirSync(out, { recursive: true });
  } catch (error) {
    throw new UsageError(
      `cannot create the output folder ${out} (${(error as NodeJS.ErrnoException).code}); pass --out DIR you can write`,
      {
        cause: error,
      },
    );
  }
  const written: string[] = [];
  for (const a of r.attestations) {
    for (const [suffix, doc] of [
      ["intoto.json", a.envelope],
      ["sigstore.json", a.bundle],
    ] as const) {
      const file = path.join(out, `${a.name}.${suffix}`);
      atomicWriteFile(file, `${JSON.stringify(doc, null, 2)}\n`);
      written.push(file);
    }
  }
  const lines = r.attestations.map((a) => `${a.name}  ${a.statement.predicateType}  evidence: ${a.statement.predicate.evidence.scheme}`);
  return {
    exitCode: 0,
    text: [
      ...lines,
      `${r.attestations.length} attestations of run ${r.run_id} (head ${r.head}) in ${out}, envelopes signed by ${r.attester}`,
    ].join("\n"),
    json: { ok: true, run_id: r.run_id, head: r.head, attester: r.attester, out, files: written, attestations: r.attestations },
  };
}

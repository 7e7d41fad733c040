import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, renameSync, rmdirSync, rmSync } from "node:fs";
import path from "node:path";
import { EXPORTED_TRUST_FILE, exportedTrustOf } from "../../ci/exported-trust.js";
import { UsageError } from "../../errors/errors.js";
import { exportRun } from "../../gate/export-run.js";
import { readBlob } from "../../home/frozen-bytes.js";
import { loadPinnedPolicy } from "../../home/suite-pins.js";
import { listTrustedGateKeys } from "../../home/trusted-gate-keys.js";
import { atomicWriteFile, fsyncDir } from "../../store/atomic-write.js";
import { serializeRunFile } from "../../store/run-file.js";
import { frozenFilesOf } from "../../store/run-store.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";

/**
 * `twinlock export RUN [--out DIR]`: a run as the verifiable run-file format,
 * from whichever store holds it (a team's database included), so it can be
 * audited offline (`verify-log`, `twinlock verify`) and attached to a pull
 * request. With `--out`, DIR/run.json, every frozen file of every revision
 * under DIR/frozen/ by its sha256 (each checked as it is written), and
 * DIR/trust.json: the reviewers and policies the store judged its receipts by.
 */
export async function runExport(ref: string, o: CommonOptions & { out?: string; store?: string }): Promise<CommandResult> {
  const store = storeOption(o);
  // The gate vouches for the head it holds: what a verifier pins (`trust gate-key`) is this key.
  const { run, exported, gateKey } = await exportRun(store, ref);
  const text = serializeRunFile(exported);
  if (o.out === undefined) return { exitCode: 0, text: text.trimEnd(), json: exported };
  const out = path.resolve(o.out);
  if (existsSync(out) && readdirSync(out).length > 0) throw new UsageError(`--out ${o.out} is not empty; give a new or empty folder`);
  // Who the store trusted to sign the receipts, for `verify-receipts --exported` anywhere: found before anything is
  // written, so a refusal (a pin gone stale, say) leaves no half-made export behind.
  const trust = exportedTrustOf(
    loadPinnedPolicy(store.home, run.state.suite),
    store.label,
    new Date(),
    gateKey,
    listTrustedGateKeys(store.home),
  );
  // Written beside DIR and renamed into place whole: a damaged blob or a full disk part-way leaves nothing at DIR.
  const staging = `${out}.export-${process.pid}-${randomBytes(4).toString("hex")}`;
  const written = new Set<string>();
  try {
    mkdirSync(path.join(staging, "frozen"), { recursive: true });
    for (const f of frozenFilesOf(run.file.events)) {
      if (written.has(f.sha256)) continue;
      // readBlob checks the bytes against their recorded sha256 and size.
      atomicWriteFile(path.join(staging, "frozen", f.sha256), readBlob(store.home, f), 0o444);
      written.add(f.sha256);
    }
    atomicWriteFile(path.join(staging, EXPORTED_TRUST_FILE), `${JSON.stringify(trust, null, 1)}\n`);
    atomicWriteFile(path.join(staging, "run.json"), text);
    if (existsSync(out)) rmdirSync(out);
    renameSync(staging, out);
    fsyncDir(path.dirname(out));
  } catch (error) {
    rmSync(staging, { recursive: true, force: true });
    throw error;
  }
  return {
    exitCode: 0,
    text: `exported run ${run.state.run_id} (${run.file.revision} events, head ${run.file.head}, signed by gate key ${gateKey}) to ${path.join(out, "run.json")}, with ${written.size} frozen files in ${path.join(out, "frozen")}; check it offline with \`twinlock verify-log --exported ${path.join(o.out, "run.json")}\` and \`twinlock verify-receipts --exported ${path.join(o.out, "run.json")} --trust ${path.join(o.out, EXPORTED_TRUST_FILE)}\``,
    json: {
      ok: true,
      run_id: run.state.run_id,
      events: run.file.revision,
      head: run.file.head,
      gate_key: gateKey,
      frozen_files: written.size,
      dir: out,
    },
  };
}

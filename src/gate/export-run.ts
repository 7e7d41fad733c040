import type { RunFile } from "../run/run-schema.js";
import type { LoadedRun } from "../store/run-file.js";
import type { RunStore } from "../store/run-store.js";
import { ensureGateKey } from "../trust/gate-key.js";
import { signHead } from "../trust/gate-statement.js";

/**
 * A run as its store holds it, its head signed again by the gate as an
 * export (not as a checkpoint): what CI and auditors take as the gate's word
 * for the run, from whichever store holds it.
 */
export async function exportRun(store: RunStore, ref: string): Promise<{ run: LoadedRun; exported: RunFile; gateKey: string }> {
  const run = await store.read(ref);
  const gate = await ensureGateKey(store.home);
  return { run, exported: { ...run.file, gate_signature: signHead(run.file, gate, "export") }, gateKey: gate.publicKey };
}

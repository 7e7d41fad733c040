import path from "node:path";
import { hashCanonical } from "../crypto/canonical-hash.js";
import { atomicWriteFile, mkdirDurable } from "../store/atomic-write.js";
import { readGateKey } from "../trust/gate-key.js";
import { type GateSignature, signGateStatement } from "../trust/gate-statement.js";
import type { GateHome } from "./gate-home.js";

/** What `twinlock exec` records when its command ends: the executor's own exit status, for the person who closes the workflow. */
export interface ExecResult {
  format: "twinlock-exec-result/1";
  run_id: string;
  planner: string;
  executor: string;
  handoff_hash: string;
  command: string[];
  status: number;
  started_at: string;
  ended_at: string;
  /** The gate's signature of the result (kind exec_result, seq 0, head: the sha256 of the result without it). */
  gate_signature?: GateSignature;
}

/** Record an exec result in the gate home (`exec-results/`), atomically and durably; returns the file. */
export function recordExecResult(home: GateHome, given: ExecResult): string {
  const gate = readGateKey(home);
  const { gate_signature: _g, ...unsigned } = given;
  // An exec follows an admission, which made the gate's key; a home without one records the result unsigned.
  const result: ExecResult = gate
    ? { ...unsigned, gate_signature: signGateStatement(gate, "exec_result", given.run_id, 0, hashCanonical(unsigned)) }
    : unsigned;
  const dir = mkdirDurable(path.join(home.dir, "exec-results"));
  const stamp = result.ended_at.replace(/[:.]/g, "-");
  const file = path.join(dir, `${result.run_id}.${result.executor}.${stamp}.json`);
  atomicWriteFile(file, `${JSON.stringify(result, null, 2)}\n`, 0o600);
  return file;
}

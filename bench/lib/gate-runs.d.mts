/** Types of gate-runs.mjs (plain JavaScript: the bench runs without a compiler). */
export interface GateRun {
  index: number;
  runId: string;
  runFile: string;
  planner: string;
  executor: string;
  handoffHash: string;
  token: string;
}
export interface BenchRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}
// biome-ignore lint/suspicious/noExplicitAny: the built library's own types live in dist/, which may not exist yet
export type GateLibrary = Record<string, any>;
export function realisticPairs(prompts?: number): { planner: string; executor: string }[];
export function loadGateLibrary(root: string): Promise<GateLibrary>;
export function prepareGateRuns(options: {
  lib: GateLibrary;
  signed: { suite: string; home: string; key: string; freezeKey: string };
  dir: string;
  from?: number;
  to: number;
  concurrency?: number;
  prompts?: number;
}): Promise<GateRun[]>;
export function statusRequest(run: Pick<GateRun, "runId" | "planner" | "token">): BenchRequest;
export function admissionCheckRequest(run: Pick<GateRun, "runId" | "executor" | "token">): BenchRequest;

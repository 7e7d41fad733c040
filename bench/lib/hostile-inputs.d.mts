/** Types of hostile-inputs.mjs (plain JavaScript: the bench runs without a compiler). */
export const RANDOM_LINES_BYTES: number;
export const CHAINED_RUN_BYTES: number;
export function writeRandomLinesFile(file: string, options?: { bytes?: number; lineBytes?: number }): { bytes: number; lines: number };
export function writeChainedRunFile(
  runFile: string,
  options: { hashEvent: (event: never) => string; bytes?: number },
): { bytes: number; events: number; added: number };
export function writeEmptyEventsRunFile(runFile: string, count: number): { bytes: number; events: number };
export function writeEmptyActionsPlan(handoffDir: string, count: number): { file: string; bytes: number; actions: number };
export function writeManySmallFiles(handoffDir: string, count: number, bytes?: number): { dir: string; files: number };
export function loopbackAddresses(count: number): string[];
export function signinFlood(options: {
  url: string;
  requests?: number;
  addresses?: string[];
  concurrency?: number;
  timeoutMs?: number;
  deadline?: number;
}): Promise<{ sent: number; statuses: Record<string, number>; addresses: string[] }>;

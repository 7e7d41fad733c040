/** Types of load-generator.mjs (plain JavaScript: the bench runs without a compiler). */
export interface LoadResult {
  concurrency: number;
  count: number;
  errors: number;
  firstError: string | undefined;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}
export function runLoad(options: {
  url: string;
  request: (i: number) => { method?: string; path: string; headers?: Record<string, string>; body?: string };
  concurrency?: number;
  requests?: number;
  maxSeconds?: number;
  warmup?: number;
  warmupSeconds?: number;
  expectStatus?: number;
}): Promise<LoadResult>;

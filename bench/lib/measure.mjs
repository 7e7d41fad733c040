/**
 * Timing and memory probes for the benchmark. Every figure is a wall time of
 * a spawned process (so start-up counts, as it does for a user), and every
 * report is a median of several runs.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const GNU_TIME = "/usr/bin/time";

/** Median of a list of numbers. */
export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Run `cmd args` once; return its wall time in ms, exit code and output. */
export function runOnce(cmd, args, options = {}) {
  const start = process.hrtime.bigint();
  const r = spawnSync(cmd, args, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, ...options });
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (r.error) throw new Error(`could not start ${cmd}: ${r.error.message}`);
  return { ms, status: r.status, signal: r.signal, stdout: r.stdout ?? "", stderr: r.stderr ?? "" };
}

/**
 * Run `cmd args` `runs` times after `warmup` untimed runs (so the page cache
 * and the compile cache are as warm as they would be on a second call) and
 * return the median, min and max wall times with the last run's result.
 */
export function timeCommand(cmd, args, { runs = 5, warmup = 1, ...options } = {}) {
  for (let i = 0; i < warmup; i++) runOnce(cmd, args, options);
  const times = [];
  let last;
  for (let i = 0; i < runs; i++) {
    last = runOnce(cmd, args, options);
    times.push(last.ms);
  }
  return { median: median(times), min: Math.min(...times), max: Math.max(...times), times, last };
}

/** Which probe `peakRss` uses on this machine, for the report. */
export function rssProbe() {
  return hasGnuTime() ? "/usr/bin/time -v (max RSS)" : "process.resourceUsage().maxRSS via --import preload";
}

let gnuTime;
function hasGnuTime() {
  if (gnuTime === undefined) {
    gnuTime =
      existsSync(GNU_TIME) && /Maximum resident set size/.test(spawnSync(GNU_TIME, ["-v", "true"], { encoding: "utf8" }).stderr ?? "");
  }
  return gnuTime;
}

/**
 * Peak resident memory, in KiB, of one run of `node nodeArgs…`. Uses GNU
 * `time -v` when present; otherwise preloads a module that writes the
 * process's own `maxRSS` to a file as it exits.
 */
export function peakRss(nodeArgs, options = {}) {
  if (hasGnuTime()) {
    const r = spawnSync(GNU_TIME, ["-v", process.execPath, ...nodeArgs], { encoding: "utf8", maxBuffer: 256 * 1024 * 1024, ...options });
    const m = /Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr ?? "");
    if (!m) throw new Error(`/usr/bin/time -v printed no maximum resident set size:\n${(r.stderr ?? "").slice(-2000)}`);
    return { kib: Number(m[1]), status: r.status };
  }
  const dir = mkdtempSync(join(tmpdir(), "twinlock-bench-rss-"));
  try {
    const out = join(dir, "rss");
    const r = spawnSync(process.execPath, ["--import", join(here, "report-max-rss.mjs"), ...nodeArgs], {
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
      ...options,
      env: { ...process.env, ...options.env, TWINLOCK_BENCH_RSS_FILE: out },
    });
    return { kib: Number(readFileSync(out, "utf8")), status: r.status };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Preloaded with `node --import` when GNU time is missing: writes this
 * process's peak resident set size (KiB, as `getrusage` reports it on Linux)
 * to the file named by TWINLOCK_BENCH_RSS_FILE when the process exits.
 */
import { writeFileSync } from "node:fs";

const file = process.env.TWINLOCK_BENCH_RSS_FILE;
if (file) process.on("exit", () => writeFileSync(file, String(process.resourceUsage().maxRSS)));

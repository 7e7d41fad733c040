/**
 * Handoff folders for the benchmark: a small, ready handoff (SPEC §4 records
 * whose every citation resolves) for the command section, and a large one of
 * random bytes, cached between runs, for the hashing section.
 */
import { randomFillSync } from "node:crypto";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";

/** The four record files of SPEC §4, all citations resolving, nothing open or stopped. */
export function handoffRecords(plannerId = "MD-29") {
  return {
    "evidence_index.json": {
      evidence: [
        {
          id: "E1",
          source: "logs/api-2024-11-28.log:1200-1260",
          observed: "NullPointerException in OrderService.total when coupon is null",
        },
        { id: "E2", source: "git show 4f2a9c1", observed: "coupon became optional in the last release" },
      ],
    },
    "finding_register.json": {
      findings: [{ id: "F1", summary: "total() dereferences an optional coupon", evidence: ["E1", "E2"], confidence: "high" }],
      unknowns: [{ id: "U1", question: "Do other callers assume a coupon?", status: "resolved", owner: "bench" }],
    },
    "action_plan.json": {
      actions: [
        {
          id: "A1",
          summary: "Treat a missing coupon as no discount",
          target: "src/order/order-service.ts",
          findings: ["F1"],
          risk: "low",
          rollback: "git revert the commit",
          depends_on: [],
          verifies: ["V1"],
        },
      ],
      stops: [],
    },
    "acceptance_criteria.json": {
      criteria: [{ id: "V1", criterion: "orders without a coupon total correctly", method: "npm test -- order-service" }],
    },
    "report.md": `# Handoff of ${plannerId}\n\nBenchmark fixture: one finding, one action, one acceptance check.\n`,
  };
}

/** Write the small ready handoff into `dir`. */
export function writeHandoff(dir, plannerId) {
  mkdirSync(dir, { recursive: true });
  for (const [name, content] of Object.entries(handoffRecords(plannerId))) {
    writeFileSync(join(dir, name), typeof content === "string" ? content : `${JSON.stringify(content, null, 2)}\n`);
  }
}

const CHUNK = 8 * 1024 * 1024;

/**
 * A handoff of about `totalMiB` MiB: the record files plus `files` blobs of
 * random bytes, under `cacheRoot/hash-<N>mib`. Reused when a marker beside
 * the folder (not inside it, so it is never hashed) says it is complete and
 * every blob still has its size. Returns the folder, its files and their byte total.
 */
export function ensureHashFixture(cacheRoot, totalMiB, files = 8) {
  const dir = join(cacheRoot, `hash-${totalMiB}mib`);
  const marker = `${dir}.complete`;
  const blobBytes = Math.floor((totalMiB * 1024 * 1024) / files);
  const blobs = Array.from({ length: files }, (_, i) => `blob-${i}.bin`);
  const names = [...Object.keys(handoffRecords()), ...blobs];
  const intact = () =>
    existsSync(marker) &&
    readFileSync(marker, "utf8") === `${blobBytes}x${files}\n` &&
    blobs.every((b) => existsSync(join(dir, b)) && statSync(join(dir, b)).size === blobBytes);
  let created = false;
  if (!intact()) {
    created = true;
    rmSync(marker, { force: true });
    rmSync(dir, { recursive: true, force: true });
    writeHandoff(dir);
    const buf = Buffer.allocUnsafe(Math.min(CHUNK, blobBytes));
    for (const b of blobs) {
      const fd = openSync(join(dir, b), "w");
      try {
        for (let left = blobBytes; left > 0; ) {
          const n = Math.min(left, buf.length);
          randomFillSync(buf, 0, n);
          writeSync(fd, buf, 0, n);
          left -= n;
        }
      } finally {
        closeSync(fd);
      }
    }
    writeFileSync(marker, `${blobBytes}x${files}\n`);
  }
  const paths = names.map((n) => join(dir, n));
  const bytes = paths.reduce((sum, p) => sum + statSync(p).size, 0);
  return { dir, paths, bytes, created };
}

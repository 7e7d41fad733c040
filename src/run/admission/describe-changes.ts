import type { ManifestEntry } from "../../handoff/hash-handoff.js";

/** The files added, changed or removed between two manifests, as short phrases. */
export function describeChanges(frozen: ManifestEntry[], now: ManifestEntry[]): string[] {
  const before = new Map(frozen.map((f) => [f.path, f.sha256]));
  const after = new Map(now.map((f) => [f.path, f.sha256]));
  const out: string[] = [];
  for (const [p, h] of after) {
    if (!before.has(p)) out.push(`added ${p}`);
    else if (before.get(p) !== h) out.push(`changed ${p}`);
  }
  for (const p of before.keys()) if (!after.has(p)) out.push(`removed ${p}`);
  return out;
}

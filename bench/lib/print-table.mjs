/** Plain-text tables for the benchmark report: one per section, columns aligned, numbers right-aligned. */

/** Print `title`, then `rows` (arrays of cells) under `headers`, then any `notes`. */
export function printTable(title, headers, rows, notes = []) {
  const cells = [headers, ...rows].map((r) => r.map((c) => (c === undefined || c === null ? "" : String(c))));
  const widths = headers.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const numeric = headers.map((_, i) => rows.length > 0 && rows.every((r) => isNumberLike(r[i])));
  const line = (r) =>
    r
      .map((c, i) => (numeric[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join("  ")
      .trimEnd();
  const out = [`\n${title}`, "=".repeat(title.length), line(cells[0]), widths.map((w) => "-".repeat(w)).join("  ")];
  for (const r of cells.slice(1)) out.push(line(r));
  for (const n of notes) out.push(`  ${n}`);
  process.stdout.write(`${out.join("\n")}\n`);
}

function isNumberLike(cell) {
  return (
    cell === undefined ||
    cell === null ||
    cell === "" ||
    /^(?:[×x~≈<>]|≥ )?-?[0-9][0-9.,]*\s*(ms|s|%|MiB|MiB\/s|KiB|µs)?$/.test(String(cell)) ||
    cell === "n/a"
  );
}

/** `12.3 ms`, or seconds past 10 s. */
export function fmtMs(ms) {
  if (ms === undefined || ms === null || Number.isNaN(ms)) return "n/a";
  return ms >= 10_000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(1)} ms`;
}

/** `×1.84`. */
export function fmtRatio(r) {
  return r === undefined || r === null || !Number.isFinite(r) ? "n/a" : `×${r.toFixed(2)}`;
}

/** `1,234.5 MiB`, from KiB. */
export function fmtMiB(kib) {
  return `${(kib / 1024).toFixed(1)} MiB`;
}

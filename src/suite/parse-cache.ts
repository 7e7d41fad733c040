import { loadNodeCrypto } from "../crypto/load-node-crypto.js";

/**
 * Frontmatter values already parsed, by the sha256 of the prompt file's
 * bytes. A file whose bytes are unchanged has the same frontmatter, so a
 * suite loaded again parses only the files that changed. Only what YAML
 * gave is kept; every check still runs on it. The store behind it must be
 * one the agent cannot write (the CLI keeps it in the gate home) — and no
 * gate decision uses it: admission parses the planner and its twin from
 * their bytes every time.
 */
export interface ParseCache {
  get(digest: string): Record<string, unknown> | undefined;
  set(digest: string, data: Record<string, unknown>, fileBytes?: number): void;
}

/** The key of a prompt file's bytes in a ParseCache. */
export function parseCacheKey(bytes: Uint8Array): string {
  return loadNodeCrypto().createHash("sha256").update(bytes).digest("hex");
}

/**
 * The JSON text of `data` when JSON gives it back exactly, else undefined:
 * not NaN, ±Infinity or -0 (JSON turns them into null or 0), nor a
 * `__proto__` key.
 */
export function exactJson(data: Record<string, unknown>): string | undefined {
  let exact = true;
  const text = JSON.stringify(data, (key, value) => {
    if (key === "__proto__" || (typeof value === "number" && (!Number.isFinite(value) || Object.is(value, -0)))) exact = false;
    return value;
  });
  return exact ? text : undefined;
}

/** A ParseCache held in memory, read from and written back to JSON text by its owner. */
export class MemoryParseCache implements ParseCache {
  private readonly known: Map<string, Record<string, unknown>>;
  /** Entries asked for or added in this use: what is worth keeping. */
  private readonly used = new Map<string, string>();
  private added = 0;

  constructor(entries: Iterable<[string, Record<string, unknown>]> = []) {
    this.known = new Map(entries);
  }

  get(digest: string): Record<string, unknown> | undefined {
    const data = this.known.get(digest);
    if (data !== undefined && !this.used.has(digest)) this.used.set(digest, "");
    return data;
  }

  /**
   * Keep `data` for the file of `digest`. `fileBytes` is that file's size: an
   * entry much larger than its file (aliases written out again and again) is
   * not kept, so a hostile prompt cannot fill the home.
   */
  set(digest: string, data: Record<string, unknown>, fileBytes = Number.POSITIVE_INFINITY): void {
    const text = exactJson(data);
    if (text === undefined || text.length > 2 * fileBytes + 4096) return;
    this.known.set(digest, data);
    this.used.set(digest, text);
    this.added++;
  }

  /** Whether writing it back would change anything: entries were added, or some went unused. */
  get changed(): boolean {
    return this.added > 0 || this.used.size !== this.known.size;
  }

  /** The entries used in this use, as one JSON document (entries not asked for are dropped, so the cache stays the suite's size). */
  toJson(format: string): string {
    const parts: string[] = [];
    for (const [digest, text] of this.used) parts.push(`${JSON.stringify(digest)}:${text || JSON.stringify(this.known.get(digest))}`);
    return `{"format":${JSON.stringify(format)},"entries":{${parts.join(",")}}}\n`;
  }
}

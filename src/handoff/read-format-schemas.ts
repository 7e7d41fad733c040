import { createHash } from "node:crypto";
import { closeSync, fstatSync, lstatSync, readFileSync, realpathSync } from "node:fs";
import path from "node:path";
import { RefusalError } from "../errors/errors.js";
import { BUDGETS, requireJsonWithin } from "../input/budgets.js";
import { findDeceptiveChar } from "../input/clean-text.js";
import { openBeneath } from "../input/open-beneath.js";
import { describeFileKind } from "../input/read-regular-file.js";
import type { HandoffConfig } from "../suite/suite-config.js";

/** Largest handoff schema file read (BUDGETS.formatSchema). */
const MAX_SCHEMA_BYTES = BUDGETS.formatSchema.bytes;

/** One schema file of a custom format as read from the suite: its bytes and their sha256 (what the pin binds). */
export interface FormatSchemaFile {
  path: string;
  bytes: Buffer;
  sha256: string;
}

/** The schema files a suite's handoff format names (none but for `custom`), by path relative to `twinlock.yaml`. */
export function formatSchemaPaths(handoff: HandoffConfig | undefined): string[] {
  return handoff?.format === "custom" ? [...new Set(Object.values(handoff.schemas))].sort() : [];
}

/**
 * Read each schema file a custom format names from the suite folder, as the
 * plain file it must be: the path stays inside the suite (`..`, absolute
 * paths and backslashes are refused by the config schema; the real path is
 * checked again here), no step of it is a symbolic link, it is a regular
 * file of at most 1 MiB, and what is opened is proven to be that file
 * (`openBeneath`). Every refusal is a RefusalError naming the path.
 */
export function readFormatSchemas(suiteRoot: string, handoff: HandoffConfig | undefined): FormatSchemaFile[] {
  const paths = formatSchemaPaths(handoff);
  if (paths.length === 0) return [];
  const root = realpathSync(suiteRoot);
  return paths.map((rel) => {
    const what = `handoff schema ${rel}`;
    if (rel.startsWith("/") || rel.includes("\\") || rel.split("/").some((s) => s === "" || s === "." || s === ".."))
      throw new RefusalError(`${what} leaves the suite folder; name a file inside it, relative to twinlock.yaml`, {
        attack: "schema-outside-suite",
      });
    let current = root;
    for (const part of rel.split("/")) {
      current = path.join(current, part);
      let stat: ReturnType<typeof lstatSync>;
      try {
        stat = lstatSync(current);
      } catch (error) {
        throw new RefusalError(
          `${what} cannot be read (${(error as NodeJS.ErrnoException).code}); it is named in twinlock.yaml handoff.schemas`,
          {},
          { cause: error },
        );
      }
      if (stat.isSymbolicLink())
        throw new RefusalError(
          `${what}: ${path.relative(root, current)} is a symbolic link; keep the format's schemas as plain files inside the suite`,
          {
            attack: "schema-link",
          },
        );
      if (current !== path.join(root, ...rel.split("/")) && !stat.isDirectory())
        throw new RefusalError(`${what}: ${path.relative(root, current)} is not a folder`);
    }
    let fd: number;
    try {
      fd = openBeneath(root, rel, "suite");
    } catch (error) {
      if (error instanceof RefusalError) throw error;
      throw new RefusalError(
        `${what} cannot be opened (${(error as NodeJS.ErrnoException).code}); fix its permissions`,
        {},
        { cause: error },
      );
    }
    try {
      const stat = fstatSync(fd);
      if (!stat.isFile()) throw new RefusalError(`${what} is ${describeFileKind(stat)}, not a regular file; make it a plain JSON file`);
      if (stat.size > MAX_SCHEMA_BYTES)
        throw new RefusalError(`${what} is ${stat.size} bytes, over the ${MAX_SCHEMA_BYTES}-byte limit for a schema`);
      const bytes = readFileSync(fd);
      if (bytes.length > MAX_SCHEMA_BYTES) throw new RefusalError(`${what} grew over ${MAX_SCHEMA_BYTES} bytes while being read`);
      // Nesting and width too, before anything parses it (a schema compiler recurses into every level).
      requireJsonWithin(BUDGETS.formatSchema, bytes, what);
      const hidden = findDeceptiveChar(bytes.toString("utf8"));
      if (hidden)
        throw new RefusalError(
          `${what} holds ${hidden.codePoint} at line ${hidden.line}, column ${hidden.col}: a control or direction character that makes it read differently to a person; remove it`,
        );
      return { path: rel, bytes, sha256: `sha256:${createHash("sha256").update(bytes).digest("hex")}` };
    } finally {
      closeSync(fd);
    }
  });
}

import { describe, expect, it } from "vitest";
import { verifiedCloseFields } from "./verified-close-fields.js";

const HEX = "a".repeat(64);

describe("the verified-close form's fields", () => {
  it("read each changed file as sha256sum prints it, sha256:HEX PATH, or deleted PATH, a path keeping its spaces, CRLF and blank lines ignored", () => {
    const out = verifiedCloseFields({
      handoff_hash: `sha256:${HEX}`,
      changed_files: `${HEX}  cart/cache.go\r\n\r\nsha256:${HEX} docs/a b.md\ndeleted old/file.txt\n`,
    });
    expect(out.changed_files).toEqual([
      { path: "cart/cache.go", sha256: `sha256:${HEX}` },
      { path: "docs/a b.md", sha256: `sha256:${HEX}` },
      { path: "old/file.txt", sha256: null },
    ]);
    expect(out.criteria).toEqual([]);
  });

  it("make each criterion with a command one result, the empty ones none (no evidence), and drop the per-criterion fields", () => {
    const out = verifiedCloseFields({
      changed_files: `deleted x`,
      "criterion-result:V1": "failed",
      "criterion-command:V1": "  go test ./...  ",
      "criterion-result:V2": "passed",
      "criterion-command:V2": "",
      residual: "",
    });
    expect(out).toEqual({
      changed_files: [{ path: "x", sha256: null }],
      criteria: [{ id: "V1", result: "failed", command: "go test ./..." }],
    });
  });

  it("refuse a line that is a bare path, a short hash or a hash without a path, naming its line", () => {
    for (const [text, n] of [
      ["cart/cache.go", 1],
      [`${HEX} ok\nabc123 cart/cache.go`, 2],
      [`${HEX}`, 1],
      [`sha256:${HEX.slice(1)} x`, 1],
    ] as const)
      expect(() => verifiedCloseFields({ changed_files: text })).toThrow(`line ${n} of the changed files is not "SHA256 PATH"`);
  });
});

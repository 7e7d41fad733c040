import { describe, expect, it } from "vitest";
import { runCli } from "../test-support/run-cli.js";

describe("the CLI's errors about a store it cannot reach", () => {
  it("never print the store's password, in the ?password= or the user:password@ form, as text or JSON", async () => {
    for (const url of ["postgres://gate@127.0.0.1:1/twinlock?password=s3cr3tPw", "postgresql://gate:s3cr3tPw@127.0.0.1:1/twinlock"]) {
      for (const extra of [[], ["--json"]]) {
        const r = await runCli(["db", "migrate", "--store", url, ...extra]);
        expect(r.code).not.toBe(0);
        expect(r.output).toContain("127.0.0.1:1");
        expect(r.output).not.toContain("s3cr3tPw");
      }
    }
  });
});

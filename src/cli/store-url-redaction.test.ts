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

  it("never repeat a store URL that is not postgres://, where a mistyped one still holds the password, and name where it came from", async () => {
    for (const url of [
      "postgres:gate:s3cr3tPw@127.0.0.1:5432/db",
      "postgres:/gate:s3cr3tPw@db/twinlock",
      "postgresql:gate:s3cr3tPw@db/x",
    ]) {
      const flag = await runCli(["pair-status", "run_0123456789abcdef", "MD-29", "--store", url]);
      expect(flag.code).toBe(2);
      expect(flag.stderr).toMatch(/^twinlock: --store is not a store URL/m);
      expect(flag.output).not.toContain("s3cr3tPw");
      const before = process.env.TWINLOCK_STORE;
      process.env.TWINLOCK_STORE = url;
      try {
        const env = await runCli(["pair-status", "run_0123456789abcdef", "MD-29"]);
        expect(env.code).toBe(2);
        expect(env.stderr).toMatch(/TWINLOCK_STORE is not a store URL/);
        expect(env.output).not.toContain("s3cr3tPw");
      } finally {
        if (before === undefined) delete process.env.TWINLOCK_STORE;
        else process.env.TWINLOCK_STORE = before;
      }
    }
  });
});

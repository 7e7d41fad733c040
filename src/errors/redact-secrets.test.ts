import fc from "fast-check";
import { parse } from "pg-connection-string";
import { describe, expect, it } from "vitest";
import { redactSecrets, redactStoreUrl } from "./redact-secrets.js";

const SECRET = "s3cr3tPw";
/** The secret as percent-encoding may spell it (every character, or only some). */
const SPELLINGS = [SECRET, "s%33cr%33tPw", encodeURIComponent(SECRET), "s3cr3t"];

/** Every form of a connection string pg-connection-string reads a password (or an SSL key's password) from. */
const FORMS: string[] = [
  `postgres://alice:${SECRET}@db.example.com:5432/twinlock`,
  `postgresql://alice:${SECRET}@db.example.com/twinlock`,
  `postgres://alice@db.example.com/twinlock?password=${SECRET}`,
  `postgresql://db.example.com/twinlock?sslmode=require&password=${SECRET}`,
  `postgres://db.example.com/twinlock?sslpassword=${SECRET}&sslmode=verify-full`,
  "postgres://alice:s%33cr%33tPw@db.example.com/twinlock",
  "postgres://db.example.com/twinlock?password=s%33cr%33tPw",
  `postgres://db.example.com/twinlock?pass%77ord=${SECRET}`,
  `postgres://db.example.com/twinlock?p%61ssword=${SECRET}`,
  `postgres://db.example.com/twinlock?PASSWORD=x&password=${SECRET}`,
  `socket://alice:${SECRET}@/var/run/postgresql?db=twinlock`,
  `socket:/var/run/postgresql?db=twinlock&password=${SECRET}`,
  `postgres://alice:${SECRET}@%2Fvar%2Frun%2Fpostgresql/twinlock`,
  `postgres://alice:${SECRET}@/twinlock?host=/var/run/postgresql`,
  `postgres://alice:${SECRET}@[::1]:5432/twinlock`,
  `postgres:///twinlock?user=alice&password=${SECRET}`,
  `postgres://alice:s3cr@3tPw@db.example.com/twinlock`,
  `pg://alice:${SECRET}@db.example.com/twinlock`,
  `postgres://alice:${SECRET}@db.example.com/twinlock#frag`,
  `host=db.example.com password=${SECRET}`,
];

function secretSurvives(text: string): string | undefined {
  return SPELLINGS.find((s) => text.includes(s));
}

describe("redactStoreUrl and redactSecrets", () => {
  it("are fed only forms pg itself reads a password or an SSL password from", () => {
    for (const form of FORMS) {
      const c = parse(form) as { password?: string; sslpassword?: string; database?: string | null };
      const read = [c.password, c.sslpassword, c.database].filter((x): x is string => typeof x === "string");
      expect(
        read.some((v) => v.includes("s3cr")),
        form,
      ).toBe(true);
    }
  });

  it("leave no password of any form pg accepts in a store's label", () => {
    for (const form of FORMS) expect(secretSurvives(redactStoreUrl(form)), `${form} → ${redactStoreUrl(form)}`).toBeUndefined();
  });

  it("leave no password in a message quoting the URL anywhere, in any form pg accepts", () => {
    for (const form of FORMS) {
      const message = `no run run_0123456789abcdef in PostgreSQL store ${form}; is (${form}) right?`;
      expect(secretSurvives(redactSecrets(message)), `${form} → ${redactSecrets(message)}`).toBeUndefined();
    }
  });

  it("still names the host and database, so the message says where", () => {
    expect(redactStoreUrl(`postgres://alice:${SECRET}@db.example.com:5432/twinlock?sslmode=require&password=${SECRET}`)).toBe(
      "postgres://***@db.example.com:5432/twinlock?sslmode=require&password=***",
    );
    expect(redactStoreUrl("/var/run/postgresql twinlock")).toBe("/var/run/postgresql …");
    expect(redactStoreUrl(`host=db password=${SECRET}`)).toBe("(a connection string, not shown)");
  });

  it("cut key text, token secrets and the home's own folder", () => {
    const pem = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIKey\n-----END PRIVATE KEY-----";
    const token = `tl_0123456789abcdef_${"A".repeat(43)}`;
    const out = redactSecrets(`key ${pem} token ${token} in gate home /srv/home and /srv/home/runs/x`, {
      folders: [{ path: "/srv/home", name: "the gate home" }],
    });
    expect(out).not.toContain("MC4CAQ");
    expect(out).not.toContain("A".repeat(43));
    expect(out).toContain("tl_0123456789abcdef_***");
    expect(out).not.toContain("/srv/home");
    expect(out).toBe("key [key text not shown] token tl_0123456789abcdef_*** in the gate home and the gate home/runs/x");
    expect(redactSecrets("MC4CAQAwBQYDK2VwBCIEIKey\n-----END PRIVATE KEY----- after")).toBe("[key text not shown] after");
  });

  it("hide any generated secret in a user-info or query password, however it is percent-encoded", () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[A-Za-z0-9!$'()*,;:@~._-]{6,24}$/),
        fc.constantFrom("postgres", "postgresql", "socket"),
        fc.constantFrom("userinfo", "password", "sslpassword"),
        fc.boolean(),
        (secret, scheme, where, encodeAll) => {
          const encoded = encodeAll
            ? [...secret].map((ch) => `%${ch.charCodeAt(0).toString(16).padStart(2, "0")}`).join("")
            : encodeURIComponent(secret);
          const host = scheme === "socket" ? "" : "db.example.com";
          const url =
            where === "userinfo" ? `${scheme}://alice:${encoded}@${host}/twinlock` : `${scheme}://${host}/twinlock?${where}=${encoded}`;
          const c = parse(url) as { password?: string; sslpassword?: string };
          fc.pre((where === "sslpassword" ? c.sslpassword : c.password) === secret);
          for (const out of [redactStoreUrl(url), redactSecrets(`store ${url} failed`)]) {
            expect(out).not.toContain(encoded);
            if (secret.length >= 6 && !"postgresql://alice@db.example.com/twinlock store failed ***".includes(secret))
              expect(out).not.toContain(secret);
          }
        },
      ),
    );
  });

  it("are linear on hostile text (a long run of scheme-like and key=value fragments)", () => {
    const hostile = `${"a://".repeat(50_000)}${"password".repeat(20_000)}${"-----END ".repeat(20_000)}`;
    // Behaviour, not time: the call returns, and what it returns has no password= value.
    expect(redactSecrets(hostile).length).toBeGreaterThan(0);
  });
});

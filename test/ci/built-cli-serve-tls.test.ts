import { request } from "node:https";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServerProcess } from "../../bench/lib/server-process.mjs";
import { selfSignedCertificate } from "../../src/test-support/self-signed-certificate.js";
import { makeTempDir, removeTempDirs } from "../../src/test-support/temp-suite.js";
import { DIST_BIN, ensureBuilt } from "../support/ensure-built.js";

/**
 * The installed command runs the one-file build as a script, where a dynamic
 * import of a Node built-in fails only when the code that makes it runs:
 * `twinlock serve` over TLS once answered every start with "internal error: A
 * dynamic import callback was not specified". Started here as a person
 * starts it, through bin/twinlock.cjs.
 */
let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir("twinlock-serve-tls-");
}, 240_000);

afterAll(() => {
  removeTempDirs();
});

describe("twinlock serve, as installed", () => {
  it("serves over TLS with --tls-cert and --tls-key", async () => {
    const { cert, key } = selfSignedCertificate(dir);
    const server = await startServerProcess([
      DIST_BIN,
      "serve",
      "--listen",
      "127.0.0.1:0",
      "--tls-cert",
      cert,
      "--tls-key",
      key,
      "--quiet",
    ]);
    try {
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const status = await new Promise<number>((resolve, reject) => {
        const r = request(`${server.url}/readyz`, { rejectUnauthorized: false }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        r.on("error", reject);
        r.end();
      });
      expect(status).toBe(200);
    } finally {
      await server.stop();
    }
  });
});

import { spawn } from "node:child_process";
import { statSync } from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { openGateHome } from "../home/gate-home.js";
import { addTrustedGateKey, listTrustedGateKeys, TRUSTED_GATE_KEYS_FILE } from "../home/trusted-gate-keys.js";
import { runCli, runCliJson } from "../test-support/run-cli.js";
import { pinForTest, RUN_EXAMPLE_SUITE, TEST_PINNER } from "../test-support/run-fixture.js";
import { MALLORY_KEY } from "../test-support/signed-run.js";
import { makeTempDir, removeTempDirs } from "../test-support/temp-suite.js";
import { ensureGateKey, GATE_KEY_FILE, readGateKey } from "./gate-key.js";
import { parsePublicKeyLine } from "./keys.js";

afterEach(removeTempDirs);

const BIN = path.resolve("dist/cli/bin.js");

function gateKeyInChild(home: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, "trust", "gate-key", "--home", home, "--json"], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve((JSON.parse(out) as { gate_key: string }).gate_key) : reject(new Error(out))));
  });
}

describe("the gates a home trusts besides itself", () => {
  it("trust add-gate-key takes a pinner's key only, and lists the gate for import and attest", async () => {
    const home = openGateHome(makeTempDir(), { create: true });
    await pinForTest(RUN_EXAMPLE_SUITE, false, home);
    const other = (await ensureGateKey(openGateHome(makeTempDir(), { create: true }))).publicKey;
    await expect(addTrustedGateKey(home, { name: "ci", publicKey: other }, MALLORY_KEY)).rejects.toThrow(
      /only the gate home's pinners may trust a gate key/,
    );
    await expect(addTrustedGateKey(home, { name: "ci", publicKey: other }, undefined)).rejects.toThrow(/sign with a pinner's key/);
    expect(listTrustedGateKeys(home)).toEqual([]);
    await addTrustedGateKey(home, { name: "team", publicKey: other }, TEST_PINNER);
    expect(listTrustedGateKeys(home)).toMatchObject([{ name: "team", public_key: other }]);
    expect(statSync(path.join(home.dir, TRUSTED_GATE_KEYS_FILE)).mode & 0o777).toBe(0o600);
  });
});

describe("the gate's own key", () => {
  it("is made once, private to the home's owner (0600), and the same key on every later look", async () => {
    const home = openGateHome(makeTempDir(), { create: true });
    expect(readGateKey(home)).toBeUndefined();
    const made = await ensureGateKey(home);
    expect(statSync(path.join(home.dir, GATE_KEY_FILE)).mode & 0o777).toBe(0o600);
    expect((await ensureGateKey(home)).publicKey).toBe(made.publicKey);
    expect(readGateKey(home)?.publicKey).toBe(made.publicKey);
    expect(parsePublicKeyLine(made.publicKey)).toBeDefined();
  });

  it("ends with one key when two processes race to make it", async () => {
    const home = makeTempDir();
    openGateHome(home, { create: true });
    const keys = await Promise.all([gateKeyInChild(home), gateKeyInChild(home), gateKeyInChild(home)]);
    expect(new Set(keys).size).toBe(1);
    expect(readGateKey(openGateHome(home))?.publicKey).toBe(keys[0]);
  });

  it("`trust gate-key` prints the public key line and the gate_keys: entry to pin, never the private key", async () => {
    const home = makeTempDir();
    const r = await runCli(["trust", "gate-key", "--home", home]);
    expect(r.code).toBe(0);
    const key = r.stdout.split("\n")[0] as string;
    expect(key).toMatch(/^ed25519:[A-Za-z0-9+/=]{40,}$/);
    expect(r.stdout).toContain(`gate_keys:\n  - name: gate-home\n    public_key: ${key}`);
    expect(r.output).not.toContain("PRIVATE KEY");
    const j = await runCliJson<{ gate_key: string }>(["trust", "gate-key", "--home", home]);
    expect(j.json.gate_key).toBe(key);
  });
});

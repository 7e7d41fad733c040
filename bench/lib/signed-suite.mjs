/**
 * A copy of the example suite whose twinlock.yaml lists one generated
 * reviewer key (review, consent, apply, stop) and a planner freeze key, as
 * `npm start` does, pinned in its own gate home, so the command rows can
 * sign their decisions the way the bundled suite requires.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseDocument } from "yaml";

export async function makeSignedSuite(root, exampleSuite, dir) {
  const { generateReviewerKey } = await import(join(root, "dist", "trust", "keys.js"));
  const suite = join(dir, "suite");
  mkdirSync(dir, { recursive: true });
  cpSync(exampleSuite, suite, { recursive: true });
  const reviewer = generateReviewerKey();
  const planner = generateReviewerKey();
  const key = join(dir, "bench-reviewer.key");
  const freezeKey = join(dir, "bench-planner.key");
  writeFileSync(key, reviewer.privatePem, { mode: 0o600 });
  writeFileSync(freezeKey, planner.privatePem, { mode: 0o600 });
  const configFile = join(suite, "twinlock.yaml");
  const doc = parseDocument(readFileSync(configFile, "utf8"));
  doc.set("reviewers", [
    { name: "bench-reviewer", public_key: reviewer.publicKey, rights: ["review", "consent", "apply", "stop"] },
    { name: "bench-planner", public_key: planner.publicKey, rights: ["freeze"] },
  ]);
  writeFileSync(configFile, doc.toString({ flowCollectionPadding: false }));
  const { openGateHome, pinSuite } = await import(join(root, "dist", "index.js"));
  const { createPrivateKey } = await import("node:crypto");
  const home = join(dir, "home");
  // The bench reviewer is also the home's pinner (the first pin of a new home makes it so).
  await pinSuite(openGateHome(home, { create: true }), { suiteDir: suite, key: createPrivateKey(reviewer.privatePem) });
  return { suite, key, freezeKey, home };
}

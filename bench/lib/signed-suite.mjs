/**
 * A copy of a suite whose twinlock.yaml requires signed receipts and lists
 * one generated reviewer key (review, consent, apply, stop) and a planner
 * freeze key, as `npm start` does, with its capability graph written, pinned
 * in its own gate home, so the command rows can sign their decisions.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseDocument } from "yaml";

export async function makeSignedSuite(root, sourceSuite, dir, cli) {
  const { generateReviewerKey } = await import(join(root, "dist", "trust", "keys.js"));
  const suite = join(dir, "suite");
  mkdirSync(dir, { recursive: true });
  cpSync(sourceSuite, suite, { recursive: true });
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
  doc.setIn(["policies", "require_signed_receipts"], true);
  writeFileSync(configFile, doc.toString({ flowCollectionPadding: false }));
  const graph = spawnSync(process.execPath, [cli, "graph", "--suite", suite, "--out", join(suite, "capability-graph.json")], {
    encoding: "utf8",
  });
  if (graph.status !== 0) throw new Error(`writing the bench suite's graph failed: ${graph.stderr}`);
  const { openGateHome, pinSuite } = await import(join(root, "dist", "index.js"));
  const { createPrivateKey } = await import("node:crypto");
  const home = join(dir, "home");
  // The bench reviewer is also the home's pinner (the first pin of a new home makes it so).
  await pinSuite(openGateHome(home, { create: true }), { suiteDir: suite, key: createPrivateKey(reviewer.privatePem) });
  return { suite, key, freezeKey, home };
}

/**
 * A copy of the example suite whose twinlock.yaml lists one generated
 * reviewer key (review, consent, apply), as `npm start` does, so the command
 * rows can sign their decisions the way the bundled suite requires.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseDocument } from "yaml";

export async function makeSignedSuite(root, exampleSuite, dir) {
  const { generateReviewerKey } = await import(join(root, "dist", "trust", "keys.js"));
  const suite = join(dir, "suite");
  mkdirSync(dir, { recursive: true });
  cpSync(exampleSuite, suite, { recursive: true });
  const { privatePem, publicKey } = generateReviewerKey();
  const key = join(dir, "bench-reviewer.key");
  writeFileSync(key, privatePem, { mode: 0o600 });
  const configFile = join(suite, "twinlock.yaml");
  const doc = parseDocument(readFileSync(configFile, "utf8"));
  doc.set("reviewers", [{ name: "bench-reviewer", public_key: publicKey, rights: ["review", "consent", "apply"] }]);
  writeFileSync(configFile, doc.toString({ flowCollectionPadding: false }));
  return { suite, key };
}

/*
 * Stands in for an agent tool under `twinlock plan` or `twinlock exec`: writes
 * its whole environment to OUT.env.json, then, for each step of PLAN, runs
 * the hook as the tool would (a child process, the tool's JSON on stdin) and
 * writes what each step answered to OUT. A step `{ "waitFor": FILE }` waits
 * until FILE exists (a test's cue), `{ "touch": FILE }` makes FILE.
 */
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");

const [bin, planFile, outFile] = process.argv.slice(2);
const plan = JSON.parse(fs.readFileSync(planFile, "utf8"));
fs.writeFileSync(`${outFile}.env.json`, JSON.stringify(process.env));
// An orphan (its exec killed) still ends: a test that fails never leaves it behind for long.
setTimeout(() => process.exit(9), 120_000).unref();
const sleep = new Int32Array(new SharedArrayBuffer(4));
const results = [];
// Written whole (a temporary file renamed over it): a test reading it mid-run never sees half of it.
const save = () => {
  fs.writeFileSync(`${outFile}.tmp`, JSON.stringify(results));
  fs.renameSync(`${outFile}.tmp`, outFile);
};
for (const step of plan) {
  if (step.waitFor) {
    while (!fs.existsSync(step.waitFor)) Atomics.wait(sleep, 0, 0, 50);
    continue;
  }
  if (step.touch) {
    fs.writeFileSync(step.touch, "");
    continue;
  }
  const r = spawnSync(process.execPath, [bin, "hook", step.agent, "--home", step.home ?? process.env.TWINLOCK_HOME], {
    input: JSON.stringify(step.input),
    encoding: "utf8",
    env: { ...process.env, ...(step.env ?? {}) },
  });
  results.push({ name: step.name, agent: step.agent, status: r.status, stdout: r.stdout, stderr: r.stderr });
  save();
}
save();
process.exit(Number(process.env.AGENT_CHILD_EXIT ?? 0));

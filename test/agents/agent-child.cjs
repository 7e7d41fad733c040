/*
 * Stands in for an agent tool under `twinlock exec`: runs the hook the way the
 * tool would (a child process, the tool's JSON on stdin) for each step of
 * plan.json, and writes what it saw to results.json. Steps may also edit the
 * checkout or plant a link, as an agent could.
 */
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

const [bin, planFile, outFile] = process.argv.slice(2);
const plan = JSON.parse(fs.readFileSync(planFile, "utf8"));
const seen = {
  env: {
    TWINLOCK_RUN: process.env.TWINLOCK_RUN,
    TWINLOCK_EXECUTOR: process.env.TWINLOCK_EXECUTOR,
    TWINLOCK_HANDOFF: process.env.TWINLOCK_HANDOFF,
    TWINLOCK_SESSION: process.env.TWINLOCK_SESSION,
    NODE_OPTIONS: process.env.NODE_OPTIONS ?? null,
  },
  checkout: process.env.TWINLOCK_HANDOFF ? fs.readdirSync(process.env.TWINLOCK_HANDOFF).sort() : [],
  results: [],
};
for (const step of plan) {
  if (step.editCheckout) {
    const file = path.join(process.env.TWINLOCK_HANDOFF, step.editCheckout);
    fs.chmodSync(file, 0o644);
    fs.appendFileSync(file, "\nedited by the agent\n");
    continue;
  }
  if (step.symlink) {
    fs.mkdirSync(path.dirname(step.symlink[1]), { recursive: true });
    fs.symlinkSync(step.symlink[0], step.symlink[1]);
    continue;
  }
  const input = step.huge
    ? `{"tool_name":"Write","tool_input":{"file_path":"x","content":"${"a".repeat(17 * 1024 * 1024)}"}}`
    : (step.stdin ?? JSON.stringify(step.input));
  const command = step.command ?? [process.execPath, bin, "hook", step.agent, "--home", step.home ?? process.env.TWINLOCK_HOME];
  const r = spawnSync(command[0], command.slice(1), {
    input,
    encoding: "utf8",
    env: { ...process.env, ...(step.env ?? {}) },
    maxBuffer: 64 * 1024 * 1024,
  });
  seen.results.push({ name: step.name, agent: step.agent, status: r.status, stdout: r.stdout, stderr: r.stderr });
}
fs.writeFileSync(outFile, JSON.stringify(seen));
process.exit(Number(process.env.AGENT_CHILD_EXIT ?? 0));

/*
 * Stands in for an agent tool under `twinlock exec`: runs the hook the way the
 * tool would (a child process, the tool's JSON on stdin) for each step of
 * plan.json, and writes what it saw to results.json. Steps may also edit the
 * checkout or plant a link, as an agent could. The hook calls between two such
 * steps are independent of each other and run a few at a time, as an agent tool
 * running tools in parallel would start them; a step that edits or links runs
 * only after every call before it has answered, and before any call after it.
 */
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const [bin, planFile, outFile] = process.argv.slice(2);
const plan = JSON.parse(fs.readFileSync(planFile, "utf8"));
const AT_ONCE = Math.max(2, Math.min(4, os.availableParallelism?.() ?? 2));
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

/** One hook call as the tool makes it: its stdin, and the status and output it answered. */
function call(step) {
  const input = step.huge
    ? `{"tool_name":"Write","tool_input":{"file_path":"x","content":"${"a".repeat(17 * 1024 * 1024)}"}}`
    : (step.stdin ?? JSON.stringify(step.input));
  const command = step.command ?? [process.execPath, bin, "hook", step.agent, "--home", step.home ?? process.env.TWINLOCK_HOME];
  return new Promise((resolve) => {
    const child = spawn(command[0], command.slice(1), { env: { ...process.env, ...(step.env ?? {}) } });
    const out = [];
    const err = [];
    child.stdout.on("data", (b) => out.push(b));
    child.stderr.on("data", (b) => err.push(b));
    // A hook that stops reading early (its input budget) closes stdin: that is an answer, not the child's failure.
    child.stdin.on("error", () => {});
    child.stdin.end(input);
    child.on("close", (status) =>
      resolve({
        name: step.name,
        agent: step.agent,
        status,
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      }),
    );
  });
}

/** The calls of `steps`, AT_ONCE at a time, answered in the order given. */
async function callAll(steps) {
  const results = new Array(steps.length);
  let next = 0;
  const lane = async () => {
    while (next < steps.length) {
      const i = next++;
      results[i] = await call(steps[i]);
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, lane));
  return results;
}

async function main() {
  let batch = [];
  const flush = async () => {
    seen.results.push(...(await callAll(batch)));
    batch = [];
  };
  for (const step of plan) {
    if (step.editCheckout) {
      await flush();
      const file = path.join(process.env.TWINLOCK_HANDOFF, step.editCheckout);
      fs.chmodSync(file, 0o644);
      fs.appendFileSync(file, "\nedited by the agent\n");
    } else if (step.symlink) {
      await flush();
      fs.mkdirSync(path.dirname(step.symlink[1]), { recursive: true });
      fs.symlinkSync(step.symlink[0], step.symlink[1]);
    } else batch.push(step);
  }
  await flush();
  fs.writeFileSync(outFile, JSON.stringify(seen));
  process.exit(Number(process.env.AGENT_CHILD_EXIT ?? 0));
}

main();

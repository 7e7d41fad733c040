/**
 * Run by the bench under `twinlock exec` (so its hook calls come from a bound,
 * admitted session, as an agent tool's would): times `twinlock hook claude`
 * on a Write inside the plan's target, a Read, and an unbound Write (the
 * session variables removed: the deny path), beside `node -e ''` measured
 * here too, and writes the medians to OUT as JSON.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { timeCommand } from "./measure.mjs";

const [cli, out, runsText] = process.argv.slice(2);
const runs = Number(runsText);
const node = process.execPath;
const target = join(process.cwd(), "src", "order", "order-service.ts");
const call = (tool_name, file_path) =>
  JSON.stringify({ session_id: "bench", cwd: process.cwd(), hook_event_name: "PreToolUse", tool_name, tool_input: { file_path } });
const unbound = { ...process.env };
for (const k of ["TWINLOCK_RUN", "TWINLOCK_EXECUTOR", "TWINLOCK_SESSION"]) delete unbound[k];
const opts = (input, env = process.env) => ({ runs, warmup: 2, input, env });
const floor = timeCommand(node, ["-e", ""], { runs, warmup: 2 });
const bound = timeCommand(node, [cli, "hook", "claude", "--home", process.env.TWINLOCK_HOME], opts(call("Write", target)));
const read = timeCommand(node, [cli, "hook", "claude", "--home", process.env.TWINLOCK_HOME], opts(call("Read", target)));
const deny = timeCommand(node, [cli, "hook", "claude", "--home", process.env.TWINLOCK_HOME], opts(call("Write", target), unbound));
const decided = (r) =>
  r.last.stdout.includes('"deny"') ? "deny" : r.last.status === 0 && r.last.stdout === "" ? "pass" : `exit ${r.last.status}`;
writeFileSync(
  out,
  JSON.stringify({
    floor: floor.median,
    bound: { median: bound.median, decided: decided(bound) },
    read: { median: read.median, decided: decided(read) },
    unbound: { median: deny.median, decided: decided(deny) },
  }),
);

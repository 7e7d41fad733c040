import { cpSync, mkdirSync, mkdtempSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { demoHandoffRecords, writeDemoHandoff } from "../../demo/demo-handoff.js";
import { UsageError } from "../../errors/errors.js";
import { startGateServer } from "../../server/start-gate-server.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption } from "../home-option.js";
import { main } from "../main.js";
import { demoInitRunArgs, EXAMPLE_SUITE, listReviewers } from "./demo.js";

/**
 * `twinlock demo --serve`: the example suite set up for the browser in a
 * folder that is kept — pinned in its own gate home, a run for MD-29 → MD-30
 * with revision 1 frozen by the planner agent's key, an enrolment link for
 * `alice` and a token for the agent — then the gate server until Ctrl-C.
 */
export async function runDemoServe(o: CommonOptions & { listen?: string; dir?: string }): Promise<CommandResult> {
  const dir = o.dir ? path.resolve(o.dir) : mkdtempSync(path.join(os.tmpdir(), "twinlock-serve-demo-"));
  mkdirSync(dir, { recursive: true });
  const home = path.join(dir, "gate-home");
  const saved = { cwd: process.cwd(), home: process.env.TWINLOCK_HOME };
  const log: string[] = [];
  const run = async (args: string[]) => {
    let captured = "";
    const code = await main(args, { stdout: (t: string) => (captured += t), stderr: (t: string) => (captured += t) });
    if (code !== 0)
      throw new UsageError(`setting up the demo: \`twinlock ${args.join(" ")}\` exited ${code}: ${captured.trim().split("\n")[0]}`);
    log.push(captured);
    return captured;
  };
  let link = "";
  let token = "";
  try {
    process.chdir(dir);
    process.env.TWINLOCK_HOME = home;
    cpSync(EXAMPLE_SUITE, "suite", { recursive: true });
    const keyOf = (text: string) => /ed25519:[A-Za-z0-9+/=]+/.exec(text)?.[0] ?? "";
    const owner = keyOf(await run(["keygen", "--name", "owner", "--out", "keys", "--rights", "review,consent,apply,stop"]));
    const planner = keyOf(await run(["keygen", "--name", "planner-agent", "--out", "keys", "--rights", "freeze"]));
    listReviewers(path.join("suite", "twinlock.yaml"), [
      { name: "owner", public_key: owner, rights: ["review", "consent", "apply", "stop", "verify"] },
      { name: "planner-agent", public_key: planner, rights: ["freeze"] },
    ]);
    await run(["trust", "pin", "--suite", "suite", "--key", path.join("keys", "owner.key")]);
    await run(demoInitRunArgs("suite"));
    writeDemoHandoff("handoff", demoHandoffRecords());
    const runId = /run_[0-9a-f]{16}/.exec(log.join("\n"))?.[0] ?? "";
    await run(["freeze-pair-handoff", "run.json", "MD-29", "--handoff", "handoff", "--key", path.join("keys", "planner-agent.key")]);
    token =
      /tl_[A-Za-z0-9_-]+/.exec(
        await run([
          "token",
          "create",
          "--agent",
          "demo-agent",
          "--run",
          "run.json",
          "--freeze-key",
          path.join("keys", "planner-agent.key"),
        ]),
      )?.[0] ?? "";
    const running = await startGateServer({ store: storeOption({ home }), listen: o.listen ?? "127.0.0.1:7420" });
    link = /https?:\/\/\S+\/enrol\/\S+/.exec(await run(["reviewer", "invite", "alice", "--origin", running.origin]))?.[0] ?? "";
    const env = `TWINLOCK_HOME=${home}`;
    process.stdout.write(
      [
        `twinlock demo --serve: the example suite in ${dir}, served at ${running.origin}`,
        "",
        `1. Open this link (single use, 15 minutes) and register a passkey for alice:`,
        `   ${link}`,
        `2. Sign in, open the run, and review revision 1 of MD-29 (request changes, or approve, then consent).`,
        `3. As the agent, edit ${path.join(dir, "handoff")} and freeze it again with the agent's token (the gate home signs with the planner's key):`,
        `   curl -X POST -H 'Authorization: Bearer ${token}' -H 'content-type: application/json' -d '{}' ${running.origin}/api/runs/${runId}/pairs/MD-29/freeze`,
        `4. After consent, admit the executor from the terminal:`,
        `   cd ${dir} && ${env} twinlock admit run.json MD-30`,
        "",
        "Stop with Ctrl-C (the folder is kept).",
        "",
      ].join("\n"),
    );
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once("SIGTERM", () => resolve("SIGTERM"));
      process.once("SIGINT", () => resolve("SIGINT"));
    });
    await running.close();
    return { exitCode: 0, text: `stopped (${signal}); the demo folder is kept: ${dir}`, json: { ok: true, dir, link, token } };
  } finally {
    process.chdir(saved.cwd);
    if (saved.home === undefined) delete process.env.TWINLOCK_HOME;
    else process.env.TWINLOCK_HOME = saved.home;
  }
}

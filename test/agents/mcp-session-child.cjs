/*
 * Stands in for an agent tool's MCP client under `twinlock plan` or `twinlock
 * exec`: writes its whole environment to OUT.env.json, starts `twinlock mcp`
 * as the tool would from its MCP settings (with the tool's environment), and
 * makes each call of PLAN in turn, writing every answer to OUT. A step
 * `{ "touch": FILE }` makes FILE (a test's cue); a call with `"until"` is
 * made again while its answer's structured status is that value.
 */
const { spawn } = require("node:child_process");
const fs = require("node:fs");
const readline = require("node:readline");

const [bin, planFile, outFile] = process.argv.slice(2);
const plan = JSON.parse(fs.readFileSync(planFile, "utf8"));
fs.writeFileSync(`${outFile}.env.json`, JSON.stringify(process.env));
setTimeout(() => process.exit(9), 150_000).unref();
const server = spawn(process.execPath, [bin, "mcp", "--run", "chosen-by-the-agent"], { stdio: ["pipe", "pipe", "inherit"] });
const waiting = new Map();
readline.createInterface({ input: server.stdout }).on("line", (line) => {
  const message = JSON.parse(line);
  waiting.get(message.id)?.(message);
  waiting.delete(message.id);
});
let next = 1;
const request = (method, params) =>
  new Promise((resolve) => {
    const id = next++;
    waiting.set(id, resolve);
    server.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`);
  });
const results = [];
const save = () => {
  fs.writeFileSync(`${outFile}.tmp`, JSON.stringify(results));
  fs.renameSync(`${outFile}.tmp`, outFile);
};
(async () => {
  await request("initialize", { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "stand-in", version: "1" } });
  server.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
  for (const step of plan) {
    if (step.touch) {
      fs.writeFileSync(step.touch, "");
      continue;
    }
    let answer;
    do answer = (await request("tools/call", { name: step.tool, arguments: step.arguments })).result;
    while (step.until !== undefined && answer?.structuredContent?.status === step.until);
    results.push({ name: step.name, answer });
    save();
  }
  save();
  server.stdin.end();
  process.exit(0);
})();

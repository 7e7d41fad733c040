import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { makeTempDir, removeTempDirs } from "../test-support/temp-suite.js";
import { makeSessionTempDir } from "./session-temp-folder.js";

afterAll(removeTempDirs);

/** The pid of a process that has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], { encoding: "utf8" });
  return Number(child.stdout);
}

describe("exec's and the MCP relay's temporary folders", () => {
  it("are named after their process, and the folders of a session killed by SIGKILL go when the next one starts", () => {
    const tmp = makeTempDir();
    const dead = deadPid();
    // What a SIGKILLed exec leaves: its checkout (read-only, as exec writes it) and its relay's socket folder.
    const checkout = path.join(tmp, `twinlock-exec-${dead}-AbC123`);
    mkdirSync(path.join(checkout, "handoff"), { recursive: true });
    writeFileSync(path.join(checkout, "handoff", "report.md"), "# report\n");
    chmodSync(path.join(checkout, "handoff"), 0o555);
    mkdirSync(path.join(tmp, `twinlock-mcp-${dead}-XyZ789`));
    // A live session's folder, a link named like a dead one's, and a folder of another name are left alone.
    const live = path.join(tmp, `twinlock-mcp-${process.pid}-LiVe00`);
    mkdirSync(live);
    const target = path.join(tmp, "elsewhere");
    mkdirSync(target);
    symlinkSync(target, path.join(tmp, `twinlock-exec-${dead}-LiNk00`));
    mkdirSync(path.join(tmp, `twinlock-exec-sandbox-${dead}`));

    const made = makeSessionTempDir("exec", tmp);
    expect(path.basename(made)).toMatch(new RegExp(`^twinlock-exec-${process.pid}-[0-9]+-[0-9a-f]{8}-[A-Za-z0-9]{6}$`));
    expect(readdirSync(tmp).sort()).toEqual(
      [path.basename(made), path.basename(live), "elsewhere", `twinlock-exec-${dead}-LiNk00`, `twinlock-exec-sandbox-${dead}`].sort(),
    );
    expect(existsSync(target)).toBe(true);
  });
});

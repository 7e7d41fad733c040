/**
 * The pin binds each pair member's file by its sha256, but a decision reads
 * the executor twice: `loadSuite` reads and parses it (what `allowed_modes`
 * and `dry_run_required` say), then `requirePinnedPrompts` (and
 * `executorDigest`) open it again and hash those bytes. An agent that can
 * write the suite puts a rewritten executor in place and, the moment the
 * gate has read it once, renames the pinned file back over it: the decision
 * judges the rewritten rules while every digest check sees the pinned bytes.
 * The rename is timed with inotify (IN_CLOSE_NOWRITE on the file's folder),
 * from a second process, as an agent's shell could; it wins at once, every
 * time on a 2-core machine. A failed attempt records nothing, so it can be
 * retried freely.
 *
 * Expected: the rules judged and the bytes hashed are the same bytes (parse
 * the buffer that was hashed), so no such admission.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  admitExecutor,
  editExecutor,
  freezeReviewConsent,
  initRun,
  makeScenario,
  pin,
  removeScenarios,
  type Scenario,
  tryInitRun,
} from "./signed-suite-scenario.js";

afterAll(removeScenarios);

/** How many times a swapper put the pinned bytes back mid-decision: the attack was really made. */
let swaps = 0;

const hasPython = spawnSync("python3", ["-c", "import ctypes; ctypes.CDLL('libc.so.6').inotify_init"]).status === 0;

/**
 * After the first close-after-read of FOLDER/NAME, rename REPLACEMENT over it
 * (atomically), and exit. A line on stdin means the decision is over: the
 * kernel queued any read's event when the gate closed the file, so the
 * swapper drains what is queued (swapping late if the gate read it) and
 * exits; whether the gate read the executor never hangs on how fast Python
 * woke up on a loaded machine.
 */
const SWAPPER = String.raw`
import ctypes, os, select, struct, sys
d, name, repl = sys.argv[1:4]
libc = ctypes.CDLL("libc.so.6", use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
libc.inotify_add_watch(fd, d.encode(), 0x10)
print("ready", flush=True)
def drain():
    try:
        buf = os.read(fd, 65536)
    except BlockingIOError:
        return
    i = 0
    while i < len(buf):
        _, _, _, ln = struct.unpack_from("iIII", buf, i)
        fn = buf[i+16:i+16+ln].rstrip(b"\0").decode(); i += 16 + ln
        if fn == name:
            os.rename(repl, os.path.join(d, name)); print("swapped", flush=True); sys.exit(0)
while True:
    ready, _, _ = select.select([fd, sys.stdin], [], [])
    drain()
    if sys.stdin in ready:
        print("unseen", flush=True); sys.exit(0)
`;

/**
 * Put `rewritten` in place of the executor file, arm the swapper that puts
 * the pinned bytes back after the gate's first read, and run `decide`.
 */
async function withSwapBack<T>(s: Scenario, pinned: string, rewritten: string, decide: () => Promise<T>): Promise<T> {
  const backup = path.join(s.dir, "pinned-executor.swap");
  writeFileSync(backup, pinned);
  writeFileSync(`${s.executorFile}.tmp`, rewritten);
  renameSync(`${s.executorFile}.tmp`, s.executorFile);
  const swapper: ChildProcess = spawn("python3", ["-c", SWAPPER, path.dirname(s.executorFile), path.basename(s.executorFile), backup]);
  // "close", not "exit": by then every line the swapper printed has been counted.
  const closed = new Promise<void>((resolve) => swapper.on("close", () => resolve()));
  swapper.stdout?.on("data", (chunk: Buffer) => {
    if (chunk.toString().includes("swapped")) swaps++;
  });
  await new Promise<void>((resolve) => swapper.stdout?.once("data", () => resolve()));
  try {
    return await decide();
  } finally {
    // The swapper drains what the kernel queued and ends; the pinned file is put back.
    // A swapper that already swapped has closed its stdin: that EPIPE is expected.
    swapper.stdin?.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
    });
    swapper.stdin?.end("done\n");
    await closed;
    writeFileSync(s.executorFile, pinned);
  }
}

describe.skipIf(!hasPython)("the executor swapped between the gate's parse and its digest", () => {
  it("does not admit an executor with dry_run_required: true to APPLY_SAFE without a dry run", async () => {
    const s = await makeScenario();
    editExecutor(s, (t) => t.replace("exact_twin_only: true\n", "exact_twin_only: true\ndry_run_required: true\n"));
    await pin(s);
    await initRun(s, "APPLY_SAFE");
    await freezeReviewConsent(s);
    // Control: asked plainly, admission wants the dry run first.
    const control = await admitExecutor(s);
    expect(control.admitted).toBe(false);
    expect(control.failed).toEqual(["dry-run"]);

    const pinnedText = readFileSync(s.executorFile, "utf8");
    const rewritten = pinnedText.replace("dry_run_required: true\n", "");
    let admitted = false;
    let output = "";
    for (let attempt = 0; attempt < 5 && !admitted; attempt++) {
      const r = await withSwapBack(s, pinnedText, rewritten, () => admitExecutor(s));
      admitted = r.admitted;
      output = r.output;
    }
    expect(swaps, "the swapper never saw the gate read the executor: the attack was not made").toBeGreaterThan(0);
    // The file on disk is the pinned one again: a later look finds nothing.
    expect(readFileSync(s.executorFile, "utf8")).toBe(pinnedText);
    expect(admitted, `admitted to APPLY_SAFE with no dry run:\n${output}`).toBe(false);
  });

  it("does not make and admit an APPLY_SAFE run of an executor whose pinned allowed_modes are DRAFT_ONLY, VERIFY_ONLY", async () => {
    const s = await makeScenario();
    editExecutor(s, (t) => t.replace(/^allowed_modes: .*$/m, "allowed_modes: [DRAFT_ONLY, VERIFY_ONLY]"));
    await pin(s);
    const pinnedText = readFileSync(s.executorFile, "utf8");
    const rewritten = pinnedText.replace(/^allowed_modes: .*$/m, "allowed_modes: [DRAFT_ONLY, APPLY_SAFE, VERIFY_ONLY]");
    // Control: asked plainly, init-run refuses the mode.
    const plain = await tryInitRun(s, "APPLY_SAFE", path.join(s.dir, "control.json"));
    expect(plain.code).not.toBe(0);
    expect(plain.output).toMatch(/does not allow mode APPLY_SAFE/);

    swaps = 0;
    let created = false;
    for (let attempt = 0; attempt < 5 && !created; attempt++) {
      created = await withSwapBack(s, pinnedText, rewritten, () =>
        initRun(s, "APPLY_SAFE").then(
          () => true,
          () => false,
        ),
      );
    }
    if (created) {
      await freezeReviewConsent(s);
      let admitted = false;
      for (let attempt = 0; attempt < 5 && !admitted; attempt++)
        admitted = (await withSwapBack(s, pinnedText, rewritten, () => admitExecutor(s))).admitted;
      expect(admitted, "MD-30 admitted in APPLY_SAFE, a mode its pinned allowed_modes do not hold").toBe(false);
    }
    expect(swaps, "the swapper never saw the gate read the executor: the attack was not made").toBeGreaterThan(0);
    expect(created, "an APPLY_SAFE run was made for MD-30, whose pinned allowed_modes are DRAFT_ONLY, VERIFY_ONLY").toBe(false);
  });
});

/**
 * The pin binds each pair member's file by its sha256, but a decision reads
 * the executor twice: `loadSuite` reads and parses it (what `allowed_modes`
 * and `dry_run_required` say), then `requirePinnedPrompts` (and
 * `executorDigest`) open it again and hash those bytes. An agent that can
 * write the suite puts a rewritten executor in place and, the moment the
 * gate has read it once, renames the pinned file back over it: the decision
 * judges the rewritten rules while every digest check sees the pinned bytes.
 * The rename is timed with inotify (IN_CLOSE_NOWRITE on the file's folder),
 * from a second process, as an agent's shell could. The agent also adds
 * thousands of notes sorted after the executor, which the gate reads before
 * its second look: the swap then lands in time even on a loaded machine. Only
 * a swap made before the decision ended counts as the attack made (both
 * processes read CLOCK_MONOTONIC). A failed attempt records nothing, so it
 * is retried until one lands.
 *
 * Expected: the rules judged and the bytes hashed are the same bytes (parse
 * the buffer that was hashed), so no such admission.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
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

/**
 * How many times a swapper put the pinned bytes back while the decision was
 * still running (by the monotonic clock both processes read): the attack was
 * really made. A swap after the decision ended proves nothing and is not counted.
 */
let swapsInTime = 0;

const hasPython = spawnSync("python3", ["-c", "import ctypes; ctypes.CDLL('libc.so.6').inotify_init"]).status === 0;

/**
 * After the first close-after-read of FOLDER/NAME, rename REPLACEMENT over it
 * (atomically), print `swapped` and the CLOCK_MONOTONIC time right after the
 * rename, and exit. A line on stdin means the decision is over: the swapper
 * then only says whether the gate had read the file (`late`) or not
 * (`unseen`), and exits without swapping.
 */
const SWAPPER = String.raw`
import ctypes, os, select, struct, sys, time
d, name, repl = sys.argv[1:4]
libc = ctypes.CDLL("libc.so.6", use_errno=True)
fd = libc.inotify_init1(os.O_NONBLOCK)
libc.inotify_add_watch(fd, d.encode(), 0x10)
print("ready", flush=True)
def read_of_file():
    seen = False
    while True:
        try:
            buf = os.read(fd, 65536)
        except BlockingIOError:
            return seen
        i = 0
        while i < len(buf):
            _, _, _, ln = struct.unpack_from("iIII", buf, i)
            fn = buf[i+16:i+16+ln].rstrip(b"\0").decode(); i += 16 + ln
            seen = seen or fn == name
while True:
    ready, _, _ = select.select([fd, sys.stdin], [], [])
    if sys.stdin in ready:
        print("late" if read_of_file() else "unseen", flush=True); sys.exit(0)
    if read_of_file():
        os.rename(repl, os.path.join(d, name))
        print("swapped", time.monotonic_ns(), flush=True); sys.exit(0)
`;

/**
 * Prompt files the agent adds to the suite after the pin, sorted after the
 * executor's folder: none names a pair member, so the gate only reads them,
 * after the executor. A gate that read the executor a second time once the
 * whole suite was read would do so this long after the first read: the
 * swapper has time to wake even on a loaded machine.
 */
function addPaddingAfterTheExecutor(s: Scenario): void {
  const dir = path.join(s.suite, "zz-padding");
  mkdirSync(dir);
  const text = `# Notes\n\n${"Filler text that names no prompt.\n".repeat(30)}`;
  for (let i = 0; i < 3000; i++) writeFileSync(path.join(dir, `note-${String(i).padStart(4, "0")}.md`), text);
}

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
  // "close", not "exit": by then every line the swapper printed has been read.
  const closed = new Promise<void>((resolve) => swapper.on("close", () => resolve()));
  let printed = "";
  swapper.stdout?.on("data", (chunk: Buffer) => {
    printed += chunk.toString();
  });
  await new Promise<void>((resolve) => swapper.stdout?.once("data", () => resolve()));
  let decided = 0n;
  try {
    const result = await decide();
    decided = process.hrtime.bigint();
    return result;
  } finally {
    decided ||= process.hrtime.bigint();
    // A swapper that already swapped has closed its stdin: that EPIPE is expected.
    swapper.stdin?.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
    });
    swapper.stdin?.end("done\n");
    const stuck = setTimeout(() => swapper.kill(), 5000);
    await closed;
    clearTimeout(stuck);
    const at = /swapped (\d+)/.exec(printed)?.[1];
    // process.hrtime and Python's monotonic_ns both read CLOCK_MONOTONIC.
    if (at !== undefined && BigInt(at) < decided) swapsInTime++;
    writeFileSync(s.executorFile, pinned);
  }
}

/** Attempts at the race before the test gives up on making the attack (it then fails, saying so). */
const ATTEMPTS = 10;
const NOT_MADE = "no swap landed while the decision was running: the attack was not made";

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
    addPaddingAfterTheExecutor(s);
    swapsInTime = 0;
    let admitted = false;
    let output = "";
    // Tried until one swap lands while admission is still deciding (a failed attempt records nothing).
    for (let attempt = 0; attempt < ATTEMPTS && swapsInTime === 0 && !admitted; attempt++) {
      const r = await withSwapBack(s, pinnedText, rewritten, () => admitExecutor(s));
      admitted = r.admitted;
      output = r.output;
    }
    expect(swapsInTime, NOT_MADE).toBeGreaterThan(0);
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

    addPaddingAfterTheExecutor(s);
    swapsInTime = 0;
    let created = false;
    for (let attempt = 0; attempt < ATTEMPTS && swapsInTime === 0 && !created; attempt++) {
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
      for (let attempt = 0; attempt < ATTEMPTS && !admitted; attempt++)
        admitted = (await withSwapBack(s, pinnedText, rewritten, () => admitExecutor(s))).admitted;
      expect(admitted, "MD-30 admitted in APPLY_SAFE, a mode its pinned allowed_modes do not hold").toBe(false);
    }
    expect(swapsInTime, NOT_MADE).toBeGreaterThan(0);
    expect(created, "an APPLY_SAFE run was made for MD-30, whose pinned allowed_modes are DRAFT_ONLY, VERIFY_ONLY").toBe(false);
  });
});

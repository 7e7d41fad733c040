/**
 * `npm run bench`: twinlock's performance as ratios against floors measured
 * on the same machine in the same run, so the figures compare across machines:
 *
 *   1. start-up: `twinlock --help` and `twinlock validate` vs `node -e ''`;
 *   2. validate at scale: suites shaped like the real 257-prompt suite
 *      (bench/lib/generate-real-suite.mjs), 257 and 10,000 prompts: median
 *      wall time, peak memory, and how the cost per prompt grows;
 *   3. commands: every row of bench/commands.mjs vs `node -e ''`, on a signed
 *      copy of the realistic 257-prompt suite; then the targets, met or not;
 *   4. the gate server (bench/lib/server-bench.mjs): requests/s and p50/p99 of
 *      the agent's status and admission-check routes of `twinlock serve` vs a
 *      bare node:http server, and its memory with 1,000 runs in its home;
 *   5. the stores (bench/lib/store-bench.mjs): gate decisions/s and p50/p99
 *      with 1 and 2 decider processes on one PostgreSQL 15 database (a
 *      throwaway cluster it starts and removes) vs the folder store; skipped
 *      with one line when PostgreSQL 15 is not installed; then, without
 *      PostgreSQL, the folder store's decisions with 8 client processes on
 *      one run: p50/p99 and whether they were served in arrival order;
 *   6. hostile inputs (bench/lib/hostile-bench.mjs): `/healthz` p99 and a
 *      signed-in reviewer's page p50 of `twinlock serve`, idle and while each
 *      availability attack an agent can make runs against it;
 *   7. hashing: `twinlock hash` on a ~1 GiB handoff vs `sha256sum` on the
 *      same files (BENCH_HASH_MB, default 1024; cached under the temp folder).
 *
 * BENCH_QUICK=1 runs a smaller version (257/2,000 prompts, 100 server runs, 2 s store rows, 6 s hostile phases, 64 MiB,
 * fewer runs). BENCH_UP_TO=3 stops after section 3 (3 to 6; default 7, every section), for quicker runs while working on
 * the CLI's own figures: the targets table then leaves out the rows of the sections that did not run.
 * BENCH_ONLY=hostile (or fair-lock, or notify — notifications, bench/lib/notify-bench.mjs —, or adapters — the in-process adapters'
 * judgement per tool call, bench/lib/adapter-bench.mjs — or several: hostile,fair-lock) runs only that section, on the realistic 257-prompt
 * suite, and the targets table of its rows; BENCH_HOSTILE=TEXT keeps, of the hostile section, the idle row and the
 * attacks whose name contains TEXT. BENCH_SERVER_CPU_PROF=DIR has every `twinlock serve` the bench starts write a V8
 * CPU profile into DIR when it stops (open it in Chrome's DevTools to see where a server's time went).
 * Needs `npm run build` first. Temporary suites and runs are removed at the end, and every server process
 * it started is killed, however the bench ends.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { cpus, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { COMMANDS } from "./commands.mjs";
import { adapterTargets, benchAdapters } from "./lib/adapter-bench.mjs";
import { generateRealSuite, realisticPrompts } from "./lib/generate-real-suite.mjs";
import { ensureHashFixture } from "./lib/handoff-fixture.mjs";
import { benchHostileInputs, hostileTargets } from "./lib/hostile-bench.mjs";
import { peakRss, rssProbe, timeCommand } from "./lib/measure.mjs";
import { benchNotify, notifyTargets } from "./lib/notify-bench.mjs";
import { fmtMiB, fmtMs, fmtRatio, printTable } from "./lib/print-table.mjs";
import { rowsThenExec, runCommandTable } from "./lib/run-command-table.mjs";
import { benchGateServer, serverTargets } from "./lib/server-bench.mjs";
import { makeSignedSuite } from "./lib/signed-suite.mjs";
import { benchFolderFairness, benchStores, fairnessTargets, storeTargets } from "./lib/store-bench.mjs";

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "bin", "twinlock.cjs");
const exampleSuite = join(root, "examples", "suite");
const quick = process.env.BENCH_QUICK === "1";
const config = {
  sizes: quick ? [2000] : [10000],
  validateRuns: quick ? 3 : 5,
  startupRuns: quick ? 7 : 15,
  commandRuns: quick ? 3 : 9,
  hashRuns: quick ? 2 : 3,
  hashMiB: parseHashMiB(process.env.BENCH_HASH_MB ?? (quick ? "64" : "1024")),
  upTo: parseUpTo(process.env.BENCH_UP_TO ?? "7"),
  only: parseOnly(process.env.BENCH_ONLY),
  hostileOnly: process.env.BENCH_HOSTILE || undefined,
};

function parseUpTo(value) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 3 || n > 7) fail(`BENCH_UP_TO must be a section number from 3 to 7, got ${JSON.stringify(value)}`);
  return n;
}

/** The sections BENCH_ONLY names, or undefined for the whole bench. */
function parseOnly(value) {
  if (value === undefined || value === "") return undefined;
  const names = value.split(",").map((n) => n.trim());
  const known = ["hostile", "fair-lock", "notify", "adapters"];
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) fail(`BENCH_ONLY takes ${known.join(", ")} (comma-separated), got ${JSON.stringify(value)}`);
  return new Set(names);
}

function parseHashMiB(value) {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 8 || n > 65536)
    fail(`BENCH_HASH_MB must be a whole number of MiB between 8 and 65536, got ${JSON.stringify(value)}`);
  return n;
}

function fail(message) {
  process.stderr.write(`bench: ${message}\n`);
  process.exit(1);
}

if (!existsSync(cli)) fail(`${cli} is missing; run \`npm run build\` first`);

const workDir = mkdtempSync(join(tmpdir(), "twinlock-bench-run-"));
// The hashing fixture lives in the run's own folder too, so nothing (not even a 1 GiB cache) outlives the bench.
config.cacheRoot = join(workDir, "hash-cache");
const cleanUp = () => rmSync(workDir, { recursive: true, force: true });
// fail() exits without unwinding the try below: the folder goes on 'exit' too (server children are killed by
// their own 'exit' handler in bench/lib/server-process.mjs).
process.on("exit", cleanUp);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    cleanUp();
    process.exit(130);
  });
}

const node = process.execPath;
const twinlock = (...args) => [cli, ...args];

try {
  const t0 = Date.now();
  process.stdout.write(
    `twinlock benchmark${quick ? " (BENCH_QUICK)" : ""}: node ${process.version}, ${cpus().length} × ${cpus()[0]?.model?.trim() ?? "unknown CPU"}, ${process.platform}\n` +
      "Each time is the median wall time of spawned processes; ratios are against floors measured just now on this machine.\n",
  );

  // The suites measured are shaped like the real, public 257-prompt suite (bench/lib/generate-real-suite.mjs).
  const real257 = generateRealSuite(join(workDir, "real-257"), 257);
  settleWrites();
  checkSuite(real257);
  if (config.only) {
    await runOnly(config.only, real257, t0);
    process.exit(0);
  }
  const firstPair = realisticPrompts(257).prompts.find((p) => p.role === "investigative");
  // validate runs two ways: with no gate home (every prompt parsed), and with a gate home holding the parse cache
  // of unchanged files (what a person's second validate of a suite meets).
  const cold = { env: { ...process.env, TWINLOCK_HOME: join(workDir, "no-home") } };
  const cacheHome = join(workDir, "cache-home");
  (await import(join(root, "dist", "index.js"))).openGateHome(cacheHome, { create: true });
  const cached = { env: { ...process.env, TWINLOCK_HOME: cacheHome } };

  // 1. Start-up.
  const floor = timeCommand(node, ["-e", ""], { runs: config.startupRuns, warmup: 2 });
  const help = timeCommand(node, twinlock("--help"), { runs: config.startupRuns, warmup: 2 });
  const validateSmall = timeCommand(node, twinlock("validate", "--suite", exampleSuite), { runs: config.startupRuns, warmup: 2, ...cold });
  const validateReal = timeCommand(node, twinlock("validate", "--suite", real257.dir), { runs: config.startupRuns, warmup: 2, ...cold });
  const validateCached = timeCommand(node, twinlock("validate", "--suite", real257.dir), {
    runs: config.startupRuns,
    warmup: 2,
    ...cached,
  });
  for (const [name, t] of [
    ["--help", help],
    ["validate (example suite)", validateSmall],
    ["validate (257 realistic prompts)", validateReal],
    ["validate (257 realistic prompts, parse cache)", validateCached],
  ])
    if (t.last.status !== 0) fail(`twinlock ${name} exited ${t.last.status}:\n${t.last.stdout}${t.last.stderr}`);
  const ratio = (t) => t.median / floor.median;
  printTable(
    "Start-up (floor: node -e '')",
    ["command", "median", "min", "max", "vs floor"],
    [
      ["node -e ''", fmtMs(floor.median), fmtMs(floor.min), fmtMs(floor.max), "×1.00"],
      ["twinlock --help", fmtMs(help.median), fmtMs(help.min), fmtMs(help.max), fmtRatio(ratio(help))],
      [
        `twinlock validate (example suite, ${countPrompts(exampleSuite)} prompts)`,
        fmtMs(validateSmall.median),
        fmtMs(validateSmall.min),
        fmtMs(validateSmall.max),
        fmtRatio(ratio(validateSmall)),
      ],
      [
        "twinlock validate (257 realistic prompts, no cache)",
        fmtMs(validateReal.median),
        fmtMs(validateReal.min),
        fmtMs(validateReal.max),
        fmtRatio(ratio(validateReal)),
      ],
      [
        "twinlock validate (257 realistic prompts, parse cache)",
        fmtMs(validateCached.median),
        fmtMs(validateCached.min),
        fmtMs(validateCached.max),
        fmtRatio(ratio(validateCached)),
      ],
    ],
    [
      `${config.startupRuns} runs each after 2 warm-ups. The realistic suite: ${real257.prompts} prompts, ${real257.pairs} pairs, ${fmtMiB(real257.bytes / 1024)},`,
      `${(real257.frontmatterLines / real257.prompts).toFixed(0)} frontmatter lines a prompt (anchors, aliases, nested maps, folded scalars), config at a repository root.`,
      "no cache: no gate home, every prompt parsed; parse cache: a gate home holding the frontmatter parsed from these exact bytes before.",
    ],
  );

  // 2. Validate at scale.
  const scale = [{ ...real257, time: validateReal, rssKiB: peakRssOf(real257, cold) }];
  const scaleCached = [{ ...real257, time: validateCached, rssKiB: peakRssOf(real257, cached) }];
  for (const size of config.sizes) {
    const suite = generateRealSuite(join(workDir, `real-${size}`), size);
    settleWrites();
    checkSuite(suite);
    const t = timeCommand(node, twinlock("validate", "--suite", suite.dir), { runs: config.validateRuns, warmup: 1, ...cold });
    if (t.last.status !== 0) fail(`validate of the ${size}-prompt suite exited ${t.last.status} while timing`);
    scale.push({ ...suite, time: t, rssKiB: peakRssOf(suite, cold) });
    const c = timeCommand(node, twinlock("validate", "--suite", suite.dir), { runs: config.validateRuns, warmup: 1, ...cached });
    scaleCached.push({ ...suite, time: c, rssKiB: peakRssOf(suite, cached) });
    rmSync(suite.dir, { recursive: true, force: true });
  }
  const [small, large] = [scale[0], scale[scale.length - 1]];
  const [smallCached, largeCached] = [scaleCached[0], scaleCached[scaleCached.length - 1]];
  const startup = help.median;
  const perPrompt = (s) => (s.time.median - startup) / s.prompts;
  const growth = perPrompt(large) / perPrompt(small);
  const growthCached = perPrompt(largeCached) / perPrompt(smallCached);
  printTable(
    "Validate at scale (realistic prompts)",
    ["prompts", "cache", "pairs", "suite size", "median", "min", "max", "vs floor", "µs/prompt*", "peak RSS"],
    [...scale.map((s) => ["no", s]), ...scaleCached.map((s) => ["parse cache", s])].map(([how, s]) => [
      s.prompts.toLocaleString("en-US"),
      how,
      s.pairs.toLocaleString("en-US"),
      fmtMiB(s.bytes / 1024),
      fmtMs(s.time.median),
      fmtMs(s.time.min),
      fmtMs(s.time.max),
      fmtRatio(s.time.median / floor.median),
      `${(perPrompt(s) * 1000).toFixed(0)} µs`,
      fmtMiB(s.rssKiB),
    ]),
    [
      `growth ${small.prompts}→${large.prompts} prompts: ${fmtRatio(growth)} the time per prompt with no cache, ${fmtRatio(growthCached)} with it (1.00 = as much per prompt at both sizes; below 1, start-up costs spread over more prompts); peak memory ${fmtRatio(large.rssKiB / small.rssKiB)} for ×${(large.prompts / small.prompts).toFixed(0)} prompts`,
      `* (median − --help start-up ${fmtMs(startup)}) / prompts. ${config.validateRuns} runs each after 1 warm-up (the 257 row: ${config.startupRuns}); memory by ${rssProbe()}, one run.`,
    ],
  );

  // 3. Commands (on a signed copy of the realistic 257-prompt suite, pinned in its own gate home).
  const signed = await makeSignedSuite(root, real257.dir, join(workDir, "signed"), cli);
  // The 10,000-prompt suite just removed (and this copy) leave the disk's journal busy for a while, and the commands
  // below fsync each write: they are timed once those writes have settled, as a person's commands meet them.
  settleWrites();
  // Every command below reads the suite's pin and the runs' checkpoints from this gate home.
  process.env.TWINLOCK_HOME = signed.home;
  const commands = runCommandTable(COMMANDS, {
    cli,
    workDir: join(workDir, "commands"),
    runs: config.commandRuns,
    base: { suite: signed.suite, key: signed.key, freezeKey: signed.freezeKey, planner: firstPair.id, executor: firstPair.twin },
  });
  // The agent hook runs before every agent tool call: timed from inside a session `twinlock exec` bound on this suite.
  const hookRuns = quick ? 7 : 21;
  const hookRows = rowsThenExec(join(root, "bench", "lib", "hook-timing-child.mjs"), (ctx) => [
    cli,
    `${ctx.run}.hook.json`,
    String(hookRuns),
  ]);
  const hookDir = join(workDir, "hook");
  const hookExec = runCommandTable(hookRows, {
    cli,
    workDir: hookDir,
    runs: 1,
    base: { suite: signed.suite, key: signed.key, freezeKey: signed.freezeKey, planner: firstPair.id, executor: firstPair.twin },
  }).find((r) => r.name === "exec");
  let hookTimes;
  try {
    hookTimes = JSON.parse(readFileSync(join(hookDir, "seq-1", "run.json.hook.json"), "utf8"));
  } catch {
    hookTimes = undefined;
  }
  if (hookTimes) {
    const row = (name, t) => [name, fmtMs(t.median), fmtRatio(t.median / hookTimes.floor), t.decided];
    printTable(
      `Agent hook (\`twinlock hook claude\`, realistic 257-prompt suite; floor: node -e '' = ${fmtMs(hookTimes.floor)}, measured beside it; target ≤ ×1.50)`,
      ["call", "median", "vs floor", "decided"],
      [
        row("Write in the plan's target, bound session", hookTimes.bound),
        row("Read (no binding needed)", hookTimes.read),
        row("Write, no session bound (deny)", hookTimes.unbound),
      ],
      [
        `${hookRuns} runs each after 2 warm-ups, from inside \`twinlock exec\` (so the bound calls descend from it, as an agent tool's would).`,
      ],
    );
  } else process.stdout.write(`\nAgent hook: not measured (exec ${hookExec?.status ?? "missing"}: ${hookExec?.detail ?? ""})\n`);
  // The same judgement inside an in-process agent (the SDK adapters, issue 28): per call, no process started.
  const adapters = await benchAdapters({
    root,
    cli,
    signed,
    pair: { planner: firstPair.id, executor: firstPair.twin },
    workDir: join(workDir, "adapters"),
    quick,
  });

  printTable(
    `Commands on a prepared run (realistic 257-prompt suite, ${firstPair.id} → ${firstPair.twin}; floor: node -e '')`,
    ["command", "median", "vs floor", "status"],
    commands.map((c) => [
      c.name,
      c.status === "ok" ? fmtMs(c.median) : "n/a",
      c.status === "ok" ? fmtRatio(c.median / floor.median) : "n/a",
      c.status === "ok" ? "ok" : `${c.status}${c.detail ? ` (${c.detail})` : ""}`,
    ]),
    [
      `floor node -e '' = ${fmtMs(floor.median)}; ${config.commandRuns} sequences, each on a fresh run file and handoff, after 1 warm-up sequence; rows in bench/commands.mjs.`,
    ],
  );

  // 4. The gate server, on its own signed copy of the realistic suite and its own gate home.
  const server =
    config.upTo >= 4
      ? await benchGateServer({
          root,
          cli,
          suiteDir: real257.dir,
          workDir: join(workDir, "server"),
          quick,
          startupFloorMs: floor.median,
        })
      : undefined;

  // 5. The stores: PostgreSQL (1 and 2 decider processes on one database) vs the folder store.
  const stores =
    config.upTo >= 5 ? await benchStores({ root, cli, suiteDir: real257.dir, workDir: join(workDir, "stores"), quick }) : undefined;
  // The folder store's decisions with 8 client processes on one run, served in arrival order or not (no PostgreSQL needed).
  const fairness =
    config.upTo >= 5
      ? await benchFolderFairness({ root, cli, suiteDir: real257.dir, workDir: join(workDir, "fair-lock"), quick })
      : undefined;

  // 6. Hostile inputs: the gate server's health check and a reviewer's page while an agent attacks it.
  const hostile =
    config.upTo >= 6
      ? await benchHostileInputs({ root, cli, suiteDir: real257.dir, workDir: join(workDir, "hostile"), quick, only: config.hostileOnly })
      : undefined;

  // The targets the benchmark holds twinlock to, against this run's floor.
  const row = (name) => commands.find((c) => c.name === name);
  const cmdRatio = (name) => (row(name)?.status === "ok" ? row(name).median / floor.median : Number.NaN);
  const targets = [
    ["--help", ratio(help), "≤ ×1.30", ratio(help) <= 1.3],
    ["validate, 257 realistic prompts, no cache", ratio(validateReal), "≤ ×2.50", ratio(validateReal) <= 2.5],
    ["validate, 257 realistic prompts, parse cache", ratio(validateCached), "≤ ×2.50", ratio(validateCached) <= 2.5],
    [
      "pair-status (stateless), 257 realistic prompts",
      cmdRatio("pair-status (stateless)"),
      "≤ ×2.00",
      cmdRatio("pair-status (stateless)") <= 2,
    ],
    ["admit, 257 realistic prompts", cmdRatio("admit"), "≤ ×2.00", cmdRatio("admit") <= 2],
    // The hook runs before every agent tool call (issue 11): its bound-session decision against the floor measured beside it.
    [
      "hook, bound Write, 257 realistic prompts (vs node -e '' beside it)",
      hookTimes ? hookTimes.bound.median / hookTimes.floor : Number.NaN,
      "≤ ×1.50",
      hookTimes ? hookTimes.bound.median / hookTimes.floor <= 1.5 : false,
    ],
    ...adapterTargets(adapters),
    ...(quick
      ? []
      : [
          [
            `validate, ${large.prompts.toLocaleString("en-US")} realistic prompts, no cache`,
            large.time.median / 1000,
            "< 2 s",
            large.time.median < 2000,
          ],
          [
            `validate, ${large.prompts.toLocaleString("en-US")} realistic prompts, parse cache`,
            largeCached.time.median / 1000,
            "< 2 s",
            largeCached.time.median < 2000,
          ],
          ["time per prompt, 257 → 10,000, no cache", growth, "≤ ×1.20", growth <= 1.2],
        ]),
    ...(server ? serverTargets(server, quick) : []),
    ...storeTargets(stores),
    ...fairnessTargets(fairness),
    ...hostileTargets(hostile),
  ];
  printTargets(targets, [
    `ratios are against node -e '' (${fmtMs(floor.median)}) measured in this run${server ? `, the server's against the bare node:http server's p50 (${server.floorP50.toFixed(3)} ms)` : ""}${quick ? "; BENCH_QUICK leaves out the 10,000-prompt targets" : ""};`,
    "the bench reports, it does not fail on a target.",
  ]);

  if (config.upTo >= 7) {
    // 7. Hashing.
    const fixture = ensureHashFixture(config.cacheRoot, config.hashMiB);
    if (fixture.created) settleWrites();
    const mib = fixture.bytes / (1024 * 1024);
    runCheck("sha256sum", fixture.paths); // warm the page cache so both sides read from memory
    const sha = timeCommand("sha256sum", fixture.paths, { runs: config.hashRuns, warmup: 0 });
    if (sha.last.status !== 0) fail(`sha256sum exited ${sha.last.status}: ${sha.last.stderr}`);
    const nodeRef = timeCommand(node, [join(root, "bench", "lib", "sha256-files.mjs"), ...fixture.paths], {
      runs: config.hashRuns,
      warmup: 0,
    });
    if (nodeRef.last.status !== 0) fail(`the node:crypto reference exited ${nodeRef.last.status}: ${nodeRef.last.stderr}`);
    const hashRow = timeHash(fixture.dir);
    const rate = (t) => mib / (t.median / 1000);
    printTable(
      `Hashing a ${mib.toFixed(0)} MiB handoff (${fixture.paths.length} files; floor: sha256sum on the same files)`,
      ["tool", "median", "MiB/s", "vs sha256sum"],
      [
        ["sha256sum", fmtMs(sha.median), rate(sha).toFixed(0), "100.0%"],
        [
          "node:crypto stream (reference)",
          fmtMs(nodeRef.median),
          rate(nodeRef).toFixed(0),
          `${((100 * rate(nodeRef)) / rate(sha)).toFixed(1)}%`,
        ],
        hashRow.status === "ok"
          ? [
              "twinlock hash",
              fmtMs(hashRow.time.median),
              rate(hashRow.time).toFixed(0),
              `${((100 * rate(hashRow.time)) / rate(sha)).toFixed(1)}%`,
            ]
          : ["twinlock hash", "n/a", "n/a", `n/a (${hashRow.detail})`],
      ],
      [
        `files written for this run in ${fixture.dir} and removed with it; BENCH_HASH_MB sets the size.`,
        `${config.hashRuns} runs each, page cache warm; aim: twinlock hash ≥ 85% of sha256sum.`,
      ],
    );
  }

  process.stdout.write(
    `\nbench finished in ${((Date.now() - t0) / 1000).toFixed(1)} s${config.upTo < 7 ? ` (BENCH_UP_TO=${config.upTo}: sections ${config.upTo + 1}–7 not run)` : ""}\n`,
  );
} finally {
  cleanUp();
}

/** BENCH_ONLY: the named sections on the realistic 257-prompt suite, then their targets. */
async function runOnly(only, real257, t0) {
  const fairness = only.has("fair-lock")
    ? await benchFolderFairness({ root, cli, suiteDir: real257.dir, workDir: join(workDir, "fair-lock"), quick })
    : undefined;
  const hostile = only.has("hostile")
    ? await benchHostileInputs({ root, cli, suiteDir: real257.dir, workDir: join(workDir, "hostile"), quick, only: config.hostileOnly })
    : undefined;
  const notify = only.has("notify") ? await benchNotify({ root, workDir: join(workDir, "notify"), quick }) : undefined;
  const adapters = only.has("adapters") ? await benchAdaptersOnly(real257) : undefined;
  printTargets(
    [...fairnessTargets(fairness), ...hostileTargets(hostile), ...notifyTargets(notify), ...adapterTargets(adapters)],
    [`BENCH_ONLY=${[...only].join(",")}: only these sections' targets; the bench reports, it does not fail on a target.`],
  );
  process.stdout.write(`\nbench finished in ${((Date.now() - t0) / 1000).toFixed(1)} s (BENCH_ONLY=${[...only].join(",")})\n`);
}

/** BENCH_ONLY=adapters: the adapters row on a signed copy of the realistic suite in its own gate home, as the full bench has it. */
async function benchAdaptersOnly(real257) {
  const signed = await makeSignedSuite(root, real257.dir, join(workDir, "signed"), cli);
  process.env.TWINLOCK_HOME = signed.home;
  const pair = realisticPrompts(257).prompts.find((p) => p.role === "investigative");
  return benchAdapters({ root, cli, signed, pair: { planner: pair.id, executor: pair.twin }, workDir: join(workDir, "adapters"), quick });
}

/** The final table: each target, what this run measured, met or not. */
function printTargets(targets, notes) {
  printTable(
    "Targets",
    ["measure", "now", "target", "status"],
    targets.map(([name, value, target, met]) => [
      name,
      typeof value === "string" ? value : target.endsWith("s") && !target.includes("×") ? `${value.toFixed(2)} s` : fmtRatio(value),
      target,
      met ? "met" : "NOT met",
    ]),
    notes,
  );
}

/** Validate the generated suite once and stop the bench unless it is clean with the expected counts. */
function checkSuite(suite) {
  const r = spawnSync(node, twinlock("validate", "--suite", suite.dir, "--json"), { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  let report;
  try {
    report = JSON.parse(r.stdout);
  } catch {
    fail(
      `validate --json on the generated ${suite.prompts}-prompt suite printed no JSON (exit ${r.status}):\n${r.stdout.slice(0, 2000)}${r.stderr.slice(0, 2000)}`,
    );
  }
  const problems = [];
  if (r.status !== 0) problems.push(`exit ${r.status}, expected 0`);
  if (report.prompts !== suite.prompts) problems.push(`${report.prompts} prompts, expected ${suite.prompts}`);
  if (report.genuine_pairs !== suite.pairs) problems.push(`${report.genuine_pairs} genuine pairs, expected ${suite.pairs}`);
  if (problems.length > 0) {
    const first = (report.diagnostics ?? []).slice(0, 10).map((d) => `  ${d.file}:${d.line}:${d.col} ${d.code} ${d.message}`);
    fail(`the generated ${suite.prompts}-prompt suite in ${suite.dir} does not validate: ${problems.join("; ")}\n${first.join("\n")}`);
  }
}

/** `twinlock hash DIR`, or n/a while the CLI does not have it. */
function timeHash(dir) {
  const probe = spawnSync(node, twinlock("hash", dir), { encoding: "utf8" });
  if (probe.status !== 0) {
    const output = `${probe.stdout}\n${probe.stderr}`;
    if (/unknown command/i.test(output)) return { status: "n/a", detail: "not in the CLI yet" };
    return { status: "failed", detail: `exit ${probe.status}: ${probe.stderr.trim().split("\n")[0]}` };
  }
  return { status: "ok", time: timeCommand(node, twinlock("hash", dir), { runs: config.hashRuns, warmup: 0 }) };
}

/** Peak memory of one `validate` of `suite`. */
function peakRssOf(suite, options) {
  const mem = peakRss(twinlock("validate", "--suite", suite.dir), options);
  if (mem.status !== 0) fail(`validate of the ${suite.prompts}-prompt suite exited ${mem.status} while measuring memory`);
  return mem.kib;
}

/** Flush freshly written files to disk so their write-back does not run during a timed command. */
function settleWrites() {
  spawnSync("sync", [], { stdio: "ignore" });
}

function runCheck(cmd, args) {
  const r = spawnSync(cmd, args, { stdio: ["ignore", "ignore", "pipe"], encoding: "utf8" });
  if (r.error || r.status !== 0) fail(`${cmd} failed: ${r.error?.message ?? r.stderr}`);
}

function countPrompts(dir) {
  const r = spawnSync(node, twinlock("validate", "--suite", dir, "--json"), { encoding: "utf8" });
  try {
    return JSON.parse(r.stdout).prompts;
  } catch {
    return "?";
  }
}

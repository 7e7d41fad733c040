#!/usr/bin/env node
"use strict";
/*
 * The `twinlock` command. It runs the one-file build (dist/twinlock.cjs) with
 * the V8 code cache that `npm run build` wrote beside it, so a call spends its
 * time on the work and not on compiling twinlock and its libraries again: the
 * gate sits in front of every agent tool call. A cache is looked up by the
 * bundle's build ID (see codeCachesOf), so only the build that wrote it uses
 * it; without one, V8 compiles as usual. The cache lives with the code it
 * speeds up and is trusted as that code is: whoever can write dist/ can
 * change twinlock itself.
 */
const path = require("node:path");
/**
 * Calls that print help or the version and run no command (`twinlock`,
 * `--help`, `-h`, `help [COMMAND]`, `--version`, `-V`): the help bundle, the
 * same CLI without its command modules, answers them.
 */
const HELP_CALLS = new Set([undefined, "--help", "-h", "help", "--version", "-V"]);
// The agent hook (`twinlock hook …`) has its own small bundle: it runs before every agent tool call.
// A hook that cannot start exits 2, which every supported agent tool reads as a deny: it fails closed.
if (process.argv[2] === "hook") {
  try {
    require(path.join(__dirname, "..", "dist", "twinlock-hook.cjs"));
  } catch {
    process.stderr.write("twinlock: the hook could not start (run `npm run build`); denied\n");
    process.exit(2);
  }
} else runCli(HELP_CALLS.has(process.argv[2]) ? "twinlock-help.cjs" : "twinlock.cjs");

function runCli(bundleName) {
  const fs = require("node:fs");
  const vm = require("node:vm");
  const Module = require("node:module");

  const file = path.join(__dirname, "..", "dist", bundleName);
  let source;
  try {
    source = fs.readFileSync(file, "utf8");
  } catch {
    process.stderr.write(`twinlock: ${file} is missing; run \`npm run build\` in ${path.join(__dirname, "..")}\n`);
    process.exit(2);
  }
  const caches = codeCachesOf(file, source);
  const writing = process.env.TWINLOCK_WRITE_CODE_CACHE;
  // A cache being written starts from its own earlier runs only, never from the whole demo's.
  const cacheFile = writing === "command" ? caches.command : writing === "all" ? caches.all : undefined;
  let cachedData;
  let used;
  for (const candidate of cacheFile ? [cacheFile] : [caches.command, caches.all]) {
    if (!candidate) continue;
    try {
      cachedData = fs.readFileSync(candidate);
      used = candidate;
      break;
    } catch {
      cachedData = undefined;
    }
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData });
  if (!writing) tuneTieringForSuiteWideCommand(process.argv[2]);
  // Which cache a call loaded, and whether V8 took it: for a start that seems slow, and for the tests.
  if (process.env.TWINLOCK_DEBUG_CODE_CACHE === "1")
    process.stderr.write(
      `twinlock: code cache ${used ? `${path.basename(used)} ${script.cachedDataRejected ? "rejected" : "accepted"}` : "none"}\n`,
    );
  const bundle = new Module(file, module);
  bundle.filename = file;
  bundle.paths = Module._nodeModulePaths(path.dirname(file));
  // The cache holds every function the run compiled: the build writes one after the whole demo, and one per command after
  // the demo's steps run as processes (each then loads only what its command runs).
  if (cacheFile)
    process.on("exit", () => {
      // Whole or not at all: a run stopped while writing leaves no half cache behind.
      const partial = `${cacheFile}.${process.pid}.tmp`;
      try {
        fs.writeFileSync(partial, script.createCachedData());
        fs.renameSync(partial, cacheFile);
      } catch (error) {
        fs.rmSync(partial, { force: true });
        process.stderr.write(
          `twinlock: could not write the code cache ${cacheFile} (${error.code ?? error.message}); run the build where dist/ is writable\n`,
        );
      }
    });
  script.runInThisContext()(bundle.exports, Module.createRequire(file), bundle, file, path.dirname(file));
}

/**
 * Commands that parse every prompt of a suite (hundreds of files of
 * frontmatter and body) in one burst of a tenth of a second. A few
 * milliseconds into that burst V8's optimizing compiler starts compiling the
 * parser on a background thread; on a machine with two cores that work
 * competes with the garbage collector's helper threads, and a 257-prompt run
 * ends before the optimized code pays it back. Three times V8's default
 * interrupt budget lets such a run finish in the baseline tiers (about 10 ms
 * faster on a realistic 257-prompt suite, measured), while a long run still
 * reaches the optimized code (10,000 prompts: no slower). Set after the code
 * cache is taken, as V8 checks a cache against the flags it was made with;
 * not when a cache is being written, for the same reason. Node 20's V8 only,
 * where the flag is known (V8 reports an unknown one on stderr). Other
 * commands, which read a few files, keep the defaults: loading node:v8 costs
 * them more than it saves.
 */
function tuneTieringForSuiteWideCommand(command) {
  // (A function, not a constant: runCli runs above, before a top-level constant down here would be set.)
  const suiteWide = command === "validate" || command === "audit-bodies" || command === "graph";
  if (!suiteWide || process.versions.node.split(".")[0] !== "20") return;
  require("node:v8").setFlagsFromString("--interrupt-budget=202752");
}

/**
 * The code caches of a bundle: `all` (from the whole demo) and, for a call
 * naming a command, `command` (from that command's runs alone). They are
 * named after the build ID on the bundle's first line (`//twinlock-build ID`,
 * a digest of the rest): V8 checks a cache only against the Node version and
 * the source's length, so a cache of another build must not be found at all.
 * A bundle without the line has no cache.
 */
function codeCachesOf(file, source) {
  const build = /^\/\/twinlock-build ([0-9a-f]{16})\n/.exec(source.slice(0, 64))?.[1];
  if (!build) return {};
  const command = process.argv[2];
  return {
    all: `${file}.${build}.cache`,
    command: command && /^[a-z][a-z-]{0,40}$/.test(command) ? `${file}.${build}.${command}.cache` : undefined,
  };
}

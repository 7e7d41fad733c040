#!/usr/bin/env node
"use strict";
/*
 * The `twinlock` command. It runs the one-file build (dist/twinlock.cjs) with
 * the V8 code cache that `npm run build` wrote beside it, so a call spends its
 * time on the work and not on compiling twinlock and its libraries again: the
 * gate sits in front of every agent tool call. V8 uses the cache only when it
 * was made from these exact bytes by this Node version, and compiles as usual
 * otherwise. The cache lives with the code it speeds up and is trusted as that
 * code is: whoever can write dist/ can change twinlock itself.
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
  const cacheFile = `${file}.cache`;
  let source;
  try {
    source = fs.readFileSync(file, "utf8");
  } catch {
    process.stderr.write(`twinlock: ${file} is missing; run \`npm run build\` in ${path.join(__dirname, "..")}\n`);
    process.exit(2);
  }
  let cachedData;
  try {
    cachedData = fs.readFileSync(cacheFile);
  } catch {
    cachedData = undefined;
  }
  const script = new vm.Script(Module.wrap(source), { filename: file, cachedData });
  const bundle = new Module(file, module);
  bundle.filename = file;
  bundle.paths = Module._nodeModulePaths(path.dirname(file));
  // The build writes the cache after one whole run (the demo), so it holds every function that run compiled.
  if (process.env.TWINLOCK_WRITE_CODE_CACHE === cacheFile) process.on("exit", () => fs.writeFileSync(cacheFile, script.createCachedData()));
  script.runInThisContext()(bundle.exports, Module.createRequire(file), bundle, file, path.dirname(file));
}

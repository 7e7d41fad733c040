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
const fs = require("node:fs");
const path = require("node:path");
const vm = require("node:vm");
const Module = require("node:module");

const file = path.join(__dirname, "..", "dist", "twinlock.cjs");
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

/**
 * Part of `npm run build`: bundles the CLI into one file, dist/twinlock.cjs
 * (resolving ~100 modules and their libraries once, here, instead of on every
 * call), then runs the demo through bin/twinlock.cjs to write the V8 code
 * caches beside it: one from the whole demo, and one per command the demo runs,
 * from its steps run as processes (dist/twinlock.cjs.BUILD[.COMMAND].cache).
 * Ajv stays outside the bundle: only a suite with a JSON-Schema handoff format
 * loads it, from node_modules.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const outfile = path.join(root, "dist", "twinlock.cjs");
const helpOutfile = path.join(root, "dist", "twinlock-help.cjs");
// Every cache of an earlier build goes first: a build that stops half way leaves bundles with no cache, never a stale one.
for (const name of readdirSafe(path.join(root, "dist")))
  if (/^twinlock(-help)?\.cjs\..*cache$/.test(name)) rmSync(path.join(root, "dist", name), { force: true });
const cliOptions = {
  entryPoints: [path.join(root, "src", "cli", "bin.ts")],
  outfile,
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  // Libraries only some commands use load from node_modules when those commands run (the server, passkeys, the
  // pages, MCP), so the bundle every hook call starts stays small. Classic zod too (see classicZodOutside).
  external: [
    "ajv",
    "ajv/*",
    "pg",
    "pg-native",
    "hono",
    "hono/*",
    "@hono/*",
    "@simplewebauthn/*",
    "markdown-it",
    "@modelcontextprotocol/*",
    "playwright-core",
  ],
  // Modules find the package's files from import.meta.url (src/package-root.ts); the bundle sits where they did, one below the root.
  define: { "import.meta.url": "__twinlockModuleUrl" },
  banner: { js: 'const __twinlockModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
  legalComments: "none",
  minify: !process.env.NO_MINIFY,
  plugins: [
    zodOnDemand(),
    classicZodOutside(),
    lazyChildProcessForCommander(),
    englishZodMessagesOnly(),
    assertOnFailureOnlyForSignalExit(),
    plainFsForProperLockfile(),
  ],
  logLevel: "warning",
};
await build(cliOptions);
/*
 * `twinlock`, `twinlock --help`, `help [COMMAND]` and `--version` print what the command table says and run no
 * command: bin/twinlock.cjs runs them from a bundle of the same CLI whose command modules are left out (the table,
 * commander and the error handling only, a tenth of the size), so they start as fast as a person expects help to.
 * test/ci/help-bundle.test.ts holds its output to the whole CLI's.
 */
await build({ ...cliOptions, outfile: helpOutfile, plugins: [...cliOptions.plugins, commandModulesLeftOut()] });

/**
 * An esbuild plugin for the help bundle: each command module the command
 * table loads when its command runs is replaced by one that refuses to load,
 * so a call that reached a command's action there would fail loudly, not
 * half-run (bin/twinlock.cjs sends only calls that run no command).
 */
function commandModulesLeftOut() {
  return {
    name: "command-modules-left-out",
    setup(b) {
      b.onResolve({ filter: /^\.\/commands\// }, (args) =>
        args.importer.endsWith(`${path.sep}register-commands.ts`) ? { path: args.path, namespace: "twinlock-left-out" } : undefined,
      );
      b.onLoad({ filter: /.*/, namespace: "twinlock-left-out" }, (args) => ({
        contents: `throw new Error(${JSON.stringify(`the help bundle has no ${args.path}: run this command through bin/twinlock.cjs`)});`,
        loader: "js",
      }));
    },
  };
}

/**
 * An esbuild plugin: inside the package `pkg` only, the module matched by
 * `filter` is replaced by `contents` (whose own imports resolve from
 * `resolveDir(args)` when given).
 * Each use below says why that module is not wanted as it is.
 */
function replaceInside({ name, pkg, filter, contents, resolveDir }) {
  const namespace = `twinlock-${name}`;
  return {
    name,
    setup(b) {
      b.onResolve({ filter }, (args) =>
        args.importer.includes(`${path.sep}node_modules${path.sep}${pkg}${path.sep}`)
          ? { path: resolveDir ? path.join(resolveDir(args), "index.js") : args.path, namespace }
          : undefined,
      );
      b.onLoad({ filter: /.*/, namespace }, (args) => ({
        contents,
        ...(resolveDir ? { resolveDir: path.dirname(args.path) } : {}),
        loader: "js",
      }));
    },
  };
}

/**
 * zod/mini loads (after src/schemas/zod-setup.ts configures it) when a schema
 * is first built, not when a module that defines schemas loads: most calls
 * parse only through the fast validators generated from the schemas
 * (src/schemas/lazy-schema.ts) and never build one, and loading zod's modules
 * took a millisecond of every command. In twinlock's own modules,
 * `import { z } from "zod/mini"` becomes a stand-in that loads zod/mini on
 * first use, and the `import ".../zod-setup.js"` lines go (the stand-in runs
 * the setup first). Tests run the modules as written, with zod loaded eagerly.
 */
function zodOnDemand() {
  const setup = path.join(root, "src", "schemas", "zod-setup.ts");
  const namespace = "twinlock-zod-on-demand";
  const ZOD_MINI_IMPORT = /^import \{ z \} from "zod\/mini";$/m;
  const ZOD_SETUP_IMPORT = /^import "(?:\.\.\/)+schemas\/zod-setup\.js";\n/m;
  return {
    name: "zod-on-demand",
    setup(b) {
      b.onLoad({ filter: /[\\/]src[\\/].*\.ts$/ }, (args) => {
        if (args.path === setup) return undefined;
        const source = readFileSync(args.path, "utf8");
        if (!ZOD_MINI_IMPORT.test(source) && !ZOD_SETUP_IMPORT.test(source)) return undefined;
        const contents = source.replace(ZOD_SETUP_IMPORT, "").replace(ZOD_MINI_IMPORT, `import { zodOnDemand as z } from "${namespace}";`);
        return { contents, loader: "ts" };
      });
      b.onResolve({ filter: new RegExp(`^${namespace}$`) }, () => ({ path: "zod-on-demand", namespace }));
      b.onLoad({ filter: /.*/, namespace }, async () => {
        // The ES module zod/mini the rest of the bundle imports (setup included), by its path: a plain `require`
        // would resolve to zod's CommonJS build, a second zod that the setup never configured.
        const esm = await b.resolve("zod/mini", { kind: "import-statement", resolveDir: root });
        if (esm.errors.length > 0 || !esm.path.endsWith(".js"))
          throw new Error(`zod-on-demand: cannot find zod/mini's ES module (${esm.path})`);
        return {
          contents: `let mini;\nexport const zodOnDemand = new Proxy({}, {\n  get(_, key) {\n    if (!mini) {\n      require(${JSON.stringify(setup)});\n      mini = require(${JSON.stringify(esm.path)}).z;\n    }\n    return mini[key];\n  },\n});\n`,
          loader: "js",
          resolveDir: root,
        };
      });
    },
  };
}

/**
 * Classic zod (`import … from "zod"`: the server's API schemas and MCP's,
 * which the MCP SDK reads with its own zod) loads from node_modules when
 * those commands run. Bundled, its functions were three fifths of the code
 * every call's cache loads. Only the bare `zod` is left out: the CLI's own
 * schemas are zod/mini, which stays in (esbuild's `external` would take every
 * `zod/…` path with it).
 */
function classicZodOutside() {
  return {
    name: "classic-zod-outside",
    setup(b) {
      b.onResolve({ filter: /^zod$/ }, () => ({ path: "zod", external: true }));
    },
  };
}

/**
 * Commander requires node:child_process at load (for executable subcommands,
 * which twinlock does not use), and with it net and streams: a few
 * milliseconds on every call. Inside commander it becomes a lazy stand-in
 * that loads the real module on first use.
 */
function lazyChildProcessForCommander() {
  return replaceInside({
    name: "lazy-child-process-for-commander",
    pkg: "commander",
    filter: /^node:child_process$/,
    contents: 'let real; module.exports = new Proxy({}, { get: (_, key) => (real ??= require("node:child_process"))[key] });',
  });
}

/**
 * signal-exit (proper-lockfile's, registered as proper-lockfile loads) requires
 * node:assert for one `assert.equal` on its callback; loading node:assert sets
 * up the stderr stream (and with it net) to ask about colours: a few
 * milliseconds on every command that takes a lock. Inside signal-exit, `assert`
 * becomes a stand-in whose `equal` compares as node:assert's does (`==`) and
 * hands any mismatch to the real node:assert, which throws its usual error.
 */
function assertOnFailureOnlyForSignalExit() {
  return replaceInside({
    name: "assert-on-failure-only-for-signal-exit",
    pkg: "signal-exit",
    filter: /^(node:)?assert$/,
    contents:
      'module.exports = { equal(actual, expected, message) { if (actual != expected) require("node:assert").equal(actual, expected, message); } };',
  });
}

/**
 * proper-lockfile's default file system is graceful-fs, which patches node:fs
 * as it loads (a few milliseconds on every command that takes a lock).
 * twinlock hands every lock its own file system (`lockFs` in
 * src/store/run-file-lock.ts, made from node:fs), so the default is never
 * used: inside proper-lockfile, graceful-fs is node:fs itself.
 */
function plainFsForProperLockfile() {
  return replaceInside({
    name: "plain-fs-for-proper-lockfile",
    pkg: "proper-lockfile",
    filter: /^graceful-fs$/,
    contents: 'module.exports = require("node:fs");',
  });
}

/**
 * Zod's namespaces (classic's and zod/mini's) export every locale's messages
 * (`z.locales`), a quarter of the bundle that each call would read and
 * compile; twinlock speaks English only, and English is imported from its own
 * module (by classic zod itself, and by src/schemas/zod-setup.ts for zod/mini),
 * not through these namespaces. Inside zod, the namespace keeps `en` alone.
 */
function englishZodMessagesOnly() {
  return replaceInside({
    name: "english-zod-messages-only",
    pkg: "zod",
    filter: /^\.\.\/locales\/index\.js$/,
    contents: 'export { default as en } from "./en.js";',
    resolveDir: (args) => path.join(path.dirname(args.importer), "..", "locales"),
  });
}

/*
 * `twinlock hook` runs before every agent tool call: it gets its own bundle of a few modules (no commander, no
 * schema or YAML library), which bin/twinlock.cjs loads instead of the CLI's. Small enough to need no code cache.
 */
await build({
  entryPoints: [path.join(root, "src", "hook", "hook-bin.ts")],
  outfile: path.join(root, "dist", "twinlock-hook.cjs"),
  bundle: true,
  platform: "node",
  format: "cjs",
  target: "node20",
  legalComments: "none",
  minify: !process.env.NO_MINIFY,
  logLevel: "warning",
});
// The entry's `#!` line would be a syntax error inside the loader's module wrapper: it becomes the build ID line,
// `//twinlock-build ID` (a digest of the rest), after which bin/twinlock.cjs names the bundle's code caches.
for (const file of [outfile, helpOutfile]) {
  const rest = readFileSync(file, "utf8").replace(/^#![^\n]*\n/, "");
  writeFileSync(file, `//twinlock-build ${createHash("sha256").update(rest).digest("hex").slice(0, 16)}\n${rest}`);
}
// bin/twinlock.cjs runs the bundles as scripts (vm.Script), which have no dynamic import: an `import()` esbuild left
// in place (a Node built-in or an external library) would fail only when its command runs. Refused here instead.
for (const file of [outfile, helpOutfile, path.join(root, "dist", "twinlock-hook.cjs")]) {
  const found = /(?<![\w$.])import\(\s*["'`][^"'`]*["'`]\s*\)/.exec(readFileSync(file, "utf8"));
  if (found) {
    process.stderr.write(
      `bundle-cli: ${path.relative(root, file)} keeps ${found[0]}, which fails in the script context bin/twinlock.cjs runs it in; require it (createRequire) instead\n`,
    );
    process.exit(1);
  }
}
// One run of the demo writes the CLI bundle's cache (for any command), one `--help` the help bundle's (it builds the
// whole command table and prints the program's help). Then the demo runs again with each step a process of its own,
// and each writes its command's cache (and adds to it, when the command comes again): a command the demo runs loads
// only what it compiles, a fraction of the whole, and starts sooner. A run that does not finish in time is stopped
// and tried once more; without a cache twinlock still works (it compiles as it goes), so a build never fails for want
// of one. The runs work in their own temporary folder, removed here whatever happens to them (a killed one cannot
// clean up).
const scratch = mkdtempSync(path.join(tmpdir(), "twinlock-build-"));
try {
  writeCodeCache(scratch, "all", ["demo"], 120_000);
  writeCodeCache(scratch, "all", ["--help"], 60_000);
  writeCodeCache(scratch, "command", ["demo", "--processes"], 240_000);
  // The outer demo of that run wrote a cache of the demo's own loop alone: the whole demo's serves `twinlock demo` better.
  for (const name of readdirSafe(path.join(root, "dist")))
    if (/^twinlock\.cjs\.[0-9a-f]+\.demo\.cache$/.test(name)) rmSync(path.join(root, "dist", name));
} finally {
  rmSync(scratch, { recursive: true, force: true });
}

function readdirSafe(dir) {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/**
 * Run `twinlock ARGS` so that it writes its code cache as it exits (`which`: "all", the bundle's cache for any
 * command, or "command", its command's own); on failure, try once more, then go on without it.
 */
function writeCodeCache(scratch, which, args, timeoutMs) {
  const what = `the \`twinlock ${args.join(" ")}\` run that writes ${which === "all" ? "the bundle's code cache" : "each command's code cache"}`;
  for (let attempt = 1; ; attempt++) {
    const run = spawnSync(process.execPath, [path.join(root, "bin", "twinlock.cjs"), ...args], {
      env: { ...process.env, TWINLOCK_WRITE_CODE_CACHE: which, NO_COLOR: "1", TMPDIR: scratch },
      encoding: "utf8",
      timeout: timeoutMs,
      killSignal: "SIGKILL",
    });
    if (run.status === 0) break;
    const why = run.signal
      ? `stopped by ${run.signal}${run.signal === "SIGKILL" ? ` after ${timeoutMs / 1000} s` : ""}`
      : `exit ${run.status}`;
    if (attempt < 2) {
      process.stderr.write(`bundle-cli: ${what} failed (${why}); trying once more\n`);
      continue;
    }
    process.stderr.write(
      `bundle-cli: ${what} failed again (${why}); twinlock works without it, only slower to start:\n${run.stdout.slice(-2000)}${run.stderr.slice(-2000)}`,
    );
    break;
  }
}

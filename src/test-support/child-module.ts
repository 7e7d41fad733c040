import path from "node:path";
import { build } from "esbuild";

/**
 * The library module `source` (a .ts file of src/) bundled with esbuild into
 * one plain ES module in `dir`, for a test's child processes to import with
 * bare `node`: the same source as the test imports, without loading tsx and
 * transforming each module again in every child (seconds a process on a
 * loaded machine, most of a race test's time).
 */
export async function bundleForChild(source: string, dir: string): Promise<string> {
  const outfile = path.join(dir, `${path.basename(source, ".ts")}.bundle.mjs`);
  await build({
    entryPoints: [source],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "error",
    // A CommonJS dependency bundled into an ES module still calls require (Node's own modules): give it one.
    banner: { js: 'import { createRequire as __twinlockRequire } from "node:module"; const require = __twinlockRequire(import.meta.url);' },
  });
  return outfile;
}

// The worker thread's entry when twinlock runs from source (vitest, tsx). When dist/ was built from the sources as they
// are now (no library .ts file newer than the build, as test/support/ensure-built.ts judges it), the worker runs tsc's
// output of the same code: a start then costs a fifth of loading every module through tsx, which every test that
// freezes paid for each worker it started. Otherwise TypeScript loads once tsx is registered here.
import { readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { workerData } from "node:worker_threads";

const src = fileURLToPath(new URL("..", import.meta.url));
const root = fileURLToPath(new URL("../..", import.meta.url));
const built = builtAt();
if (built > 0 && newestSource(src) <= built) {
  await import(new URL(`dist/offload/offload-worker.js`, `file://${root}`).href);
} else {
  const { register } = await import("tsx/esm/api");
  register();
  await import(workerData.entry);
}

/** When the build finished: the oldest of its last outputs and the worker's own file (0 when one is missing). */
function builtAt() {
  try {
    const files = ["dist/index.js", "dist/twinlock.cjs", "dist/twinlock-help.cjs", "dist/offload/offload-worker.js"];
    return Math.min(...files.map((f) => statSync(root + f).mtimeMs));
  } catch {
    return 0;
  }
}

/** The newest library source file's change time (test files and src/test-support left out, as the build leaves them). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const abs = `${dir}/${entry.name}`;
    if (entry.isDirectory()) {
      if (entry.name !== "test-support") newest = Math.max(newest, newestSource(abs));
    } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".test.ts")) newest = Math.max(newest, statSync(abs).mtimeMs);
  }
  return newest;
}

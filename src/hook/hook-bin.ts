import { isMainThread } from "node:worker_threads";
import { runHook, runHookWorker } from "./run-hook.js";

/**
 * The entry of dist/twinlock-hook.cjs: `twinlock hook …` as its own small
 * bundle, so each call loads a few kB, not the CLI. The same file is the
 * worker the hook judges the call in (see runHook), so its deadline holds
 * whatever the judging does.
 */
if (isMainThread) runHook(process.argv.slice(3), __filename);
else runHookWorker();

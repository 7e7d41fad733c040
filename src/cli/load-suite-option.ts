import { openHomeParseCache } from "../home/home-parse-cache.js";
import { findSuiteRoot } from "../suite/find-suite-root.js";
import { type LoadSuiteOptions, loadSuite, type Suite } from "../suite/load-suite.js";

/**
 * Load the suite named by `--suite`, `TWINLOCK_SUITE`, or the nearest
 * `twinlock.yaml` upward. A whole suite is loaded with the gate home's parse
 * cache when there is a home this user owns (only changed files are parsed
 * again); a load for some prompts (`promptIds`) never uses it.
 */
export function loadSuiteOption(suite: string | undefined, options: LoadSuiteOptions = {}): Suite {
  const root = findSuiteRoot({ suite });
  if (options.promptIds) return loadSuite(root, options);
  const home = openHomeParseCache(root);
  const loaded = loadSuite(root, { ...options, parseCache: home?.cache });
  home?.save();
  return loaded;
}

import { findSuiteRoot } from "../suite/find-suite-root.js";
import { type LoadSuiteOptions, loadSuite, type Suite } from "../suite/load-suite.js";

/** Load the suite named by `--suite`, `TWINLOCK_SUITE`, or the nearest `twinlock.yaml` upward. */
export function loadSuiteOption(suite: string | undefined, options: LoadSuiteOptions = {}): Suite {
  return loadSuite(findSuiteRoot({ suite }), options);
}

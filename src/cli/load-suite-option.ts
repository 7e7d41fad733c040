import { findSuiteRoot } from "../suite/find-suite-root.js";
import { loadSuite, type Suite } from "../suite/load-suite.js";

/** Load the suite named by `--suite`, `TWINLOCK_SUITE`, or the nearest `twinlock.yaml` upward. */
export function loadSuiteOption(suite: string | undefined): Suite {
  return loadSuite(findSuiteRoot({ suite }));
}

import { existsSync } from "node:fs";
import path from "node:path";
import { formatDiagnostic } from "../diagnostics/format-diagnostic.js";
import { RefusalError } from "../errors/errors.js";
import { loadSuiteConfig } from "../suite/load-suite.js";
import { CONFIG_FILE, type SuiteConfig } from "../suite/suite-config.js";

/**
 * The suite's `twinlock.yaml` for deciding trust, for the suite a run began
 * with. A missing suite, a config that is gone or invalid, or one for another
 * suite is a refusal, never an empty config: a broken or moved file must not
 * silently switch a signing policy off.
 */
export function loadPolicyConfig(suite: { root: string; suite_id: string | null }): SuiteConfig {
  if (!existsSync(suite.root)) {
    throw new RefusalError(
      `the run's suite folder ${suite.root} is gone; trust cannot be judged without its reviewers — restore the suite there`,
    );
  }
  const { config, diagnostics } = loadSuiteConfig(suite.root);
  const first = diagnostics[0];
  if (first)
    throw new RefusalError(
      `the suite's twinlock.yaml is invalid (${formatDiagnostic(first)}); fix it (twinlock validate) before recording decisions`,
    );
  if (suite.suite_id !== null && !existsSync(path.join(suite.root, CONFIG_FILE))) {
    throw new RefusalError(`the run's suite ${suite.suite_id} had a ${CONFIG_FILE}, but ${suite.root} has none now; restore it`);
  }
  if (suite.suite_id !== null && config.suite_id !== suite.suite_id) {
    throw new RefusalError(`${suite.root} is suite ${config.suite_id ?? "(no suite_id)"}, not ${suite.suite_id} that the run began with`);
  }
  return config;
}

import { formatDiagnostic } from "../diagnostics/format-diagnostic.js";
import { RefusalError } from "../errors/errors.js";
import { loadSuiteConfig } from "../suite/load-suite.js";
import type { SuiteConfig } from "../suite/suite-config.js";

/**
 * The suite's `twinlock.yaml` for deciding trust. An invalid config is a
 * refusal, never an empty one: a broken file must not silently switch a
 * signing policy off.
 */
export function loadPolicyConfig(suiteRoot: string): SuiteConfig {
  const { config, diagnostics } = loadSuiteConfig(suiteRoot);
  const first = diagnostics[0];
  if (first)
    throw new RefusalError(
      `the suite's twinlock.yaml is invalid (${formatDiagnostic(first)}); fix it (twinlock validate) before recording decisions`,
    );
  return config;
}

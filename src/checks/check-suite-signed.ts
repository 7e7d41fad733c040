import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { configKeyPosition, type Suite } from "../suite/load-suite.js";
import { CONFIG_FILE } from "../suite/suite-config.js";

/**
 * A warning for a suite meant for runs (it has a `suite_id`) that does not
 * require signed receipts: its decisions prove nothing about who made them,
 * and a gate home pins it only with `--allow-unsigned`. Nothing while
 * twinlock.yaml itself has a problem (its own report says what).
 */
export function checkSuiteSigned(suite: Suite): Diagnostic[] {
  const c = suite.config;
  // A twinlock.yaml with a problem is read without its invalid parts: whether it asks for signatures is not known.
  if (suite.diagnostics.some((d) => d.code === "CONFIG_INVALID")) return [];
  if (c.suite_id === undefined || c.policies?.require_signed_receipts === true) return [];
  const at = configKeyPosition(suite.root, c.policies ? "policies" : "suite_id");
  return [
    {
      code: "SUITE_UNSIGNED",
      severity: "warning",
      file: CONFIG_FILE,
      line: at.line,
      col: at.col,
      message: `suite ${c.suite_id} does not require signed receipts: anyone who can run twinlock can approve and consent, a gate home pins it only with --allow-unsigned, and admission says UNSIGNED; set policies.require_signed_receipts: true and list the reviewers' keys`,
    },
  ];
}

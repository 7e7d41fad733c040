import { createRequire } from "node:module";
import type * as Yaml from "yaml";

let yaml: typeof Yaml | undefined;

/**
 * The `yaml` library, loaded on first use: most calls never need it (the
 * fast frontmatter parser reads what prompts and configs really hold), and
 * loading it costs more than a whole `pair-status`. The one-file build sees
 * the literal `require("yaml")` and bundles it; run as ES modules, the
 * library is required from node_modules.
 */
export function loadYaml(): typeof Yaml {
  yaml ??= (typeof require === "function" ? require("yaml") : createRequire(import.meta.url)("yaml")) as typeof Yaml;
  return yaml;
}

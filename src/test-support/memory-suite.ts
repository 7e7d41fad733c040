import type { Diagnostic } from "../diagnostics/diagnostic.js";
import { indexSuite, type Suite } from "../suite/load-suite.js";
import { parsePromptFile } from "../suite/parse-prompt-file.js";
import type { Prompt } from "../suite/prompt.js";
import type { SuiteConfig } from "../suite/suite-config.js";

/**
 * A suite built in memory from `{ "path.md": text }`, the way `loadSuite`
 * builds one from disk (parse each file, then index), without touching the
 * disk. Files are taken in sorted path order, as `loadSuite` does.
 */
export function suiteFromFiles(files: Readonly<Record<string, string>>, config: SuiteConfig = {}, root = "/memory/suite"): Suite {
  const diagnostics: Diagnostic[] = [];
  const prompts: Prompt[] = [];
  for (const file of Object.keys(files).sort()) {
    if (!file.endsWith(".md")) continue;
    const parsed = parsePromptFile(file, new TextEncoder().encode(files[file] as string));
    diagnostics.push(...parsed.diagnostics);
    if (parsed.prompt) prompts.push(parsed.prompt);
  }
  return indexSuite(root, prompts, config, diagnostics);
}

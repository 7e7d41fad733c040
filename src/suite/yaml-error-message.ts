import type * as Yaml from "yaml";

/**
 * One line for a YAML parse error: the library's own words, or for a key
 * given twice, which key (the library says only that keys must be unique).
 */
export function yamlErrorMessage(error: Yaml.YAMLError, text: string): string {
  if (error.code === "DUPLICATE_KEY") {
    const key = /^[^:\n]*/.exec(text.slice(error.pos[0]))?.[0].trim();
    if (key) return `the key \`${key.slice(0, 80)}\` is given twice in one mapping (YAML tools differ on which one counts); keep one`;
  }
  return invalidYaml(error);
}

/** "invalid YAML: " and the first line of what went wrong (a parse error, or one met turning the document into values). */
export function invalidYaml(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return `invalid YAML: ${message.split("\n")[0]}`;
}

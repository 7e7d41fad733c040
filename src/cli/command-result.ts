/**
 * What a command hands back to the entry point: the exit code, the text for
 * a person, and the one JSON document printed instead under `--json`.
 * Commands never print or exit themselves, so the library and tests can call
 * them directly.
 */
export interface CommandResult {
  /** SPEC §6: 0 to 3; `exec` passes on its command's own status. */
  exitCode: number;
  text: string;
  json: unknown;
}

/** Options every command accepts. */
export interface CommonOptions {
  json?: boolean;
  debug?: boolean;
  /** The gate home (`--home DIR`). */
  home?: string;
  /** A team's PostgreSQL store (`--store URL`), for the commands that take one. */
  store?: string;
}

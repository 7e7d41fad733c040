/**
 * Whether `text` holds a PEM key block (`-----BEGIN PRIVATE KEY-----…`), whole
 * or in part: the key itself pasted where a path or an argument belongs,
 * which no message may echo. (A module of its own: the CLI's parse errors
 * ask it on every call, without loading the key files' code.)
 */
export function holdsKeyText(text: string): boolean {
  return /-----(BEGIN|END) [A-Z0-9 ]*KEY-----/.test(text);
}

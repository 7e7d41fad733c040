/**
 * The mark `validate --fix` writes where a value is the prompt author's to
 * give (what a prompt may touch, which tools it may use): `validate` reports
 * every block that still holds it (BODY_PLACEHOLDER) until a person writes
 * the real text.
 */
export const FILL_IN_MARK = "TWINLOCK-FILL-IN";

/** A placeholder line asking for `what`. */
export function fillIn(what: string): string {
  return `${FILL_IN_MARK}: ${what}`;
}

/**
 * Text the agent controls (handoff fields and file names, names in a run
 * file), made safe to print on one terminal line: control and bidi
 * characters replaced, newlines folded, so it cannot move the cursor, erase
 * or forge the lines a person reads around it.
 */
export function cleanText(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  return s.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, "�").replace(/\n+/g, " ");
}

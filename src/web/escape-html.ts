import { cleanLines } from "../input/clean-text.js";

const ENTITIES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/**
 * Text made safe inside an element or a quoted attribute value: `& < > " '`
 * escaped, and control, direction and other invisible characters written
 * out (see cleanLines), so agent-written text can neither open a tag nor
 * read differently in the browser than it does to the executor.
 */
export function escapeHtml(text: string): string {
  return cleanLines(text).replace(/[&<>"']/g, (c) => ENTITIES[c] as string);
}

/**
 * The files a Codex `apply_patch` envelope touches: every `*** Add File:`,
 * `*** Update File:`, `*** Delete File:` and `*** Move to:` header, read as
 * Codex's parser reads them. Lines end at `\n` (a `\r` just before it is
 * dropped, as Rust's `lines` does); a line that starts like a header once
 * trimmed of white space, Rust's (which also strips U+0085 NEL) or
 * JavaScript's (which also strips U+FEFF), is judged as one; the path is the
 * rest of the line after the marker, as Codex takes it, not trimmed again
 * (`*** Add File:  x` adds the file " x"). A header with white space around
 * it is not guessed at: Codex trims `*** Add File:` lines and reads
 * `*** Move to:` ones as they are.
 *
 * A line that starts like a header (`***`) but is none Codex knows, or a path
 * that is empty or holds a control, format or line-separator character (a
 * lone CR, U+2028), is not guessed at: the envelope is unreadable, and the
 * hook denies it. An envelope naming no file yields no path, which the hook
 * denies too.
 */
export function applyPatchPaths(patch: string): { paths: string[] } | { problem: string } {
  const paths: string[] = [];
  for (const raw of patch.split("\n")) {
    const untrimmed = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    const line = trimEdgeSpace(untrimmed);
    if (!line.startsWith("***") || PLAIN_MARKERS.has(line)) continue;
    const marker = PATH_MARKERS.find((m) => line.startsWith(m));
    if (marker === undefined)
      return { problem: `the patch line ${JSON.stringify(line.slice(0, 80))} starts like a header but is none Codex reads` };
    // Codex trims some header lines and not others (`*** Move to:` is read as it is), and Rust's white space is not
    // JavaScript's: a header with any white space around it names a path the two could read differently.
    if (line !== untrimmed)
      return {
        problem: `the patch header ${JSON.stringify(untrimmed.slice(0, 120))} has white space around it; write headers as Codex writes them`,
      };
    const path = line.slice(marker.length);
    if (path === "" || UNSEEN.test(path))
      return {
        problem: `the patch header ${JSON.stringify(line.slice(0, 120))} names a path that is empty or holds a control or line-separator character`,
      };
    paths.push(path);
  }
  return { paths };
}

const PATH_MARKERS = ["*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "];
const PLAIN_MARKERS = new Set(["*** Begin Patch", "*** End Patch", "*** End of File"]);
/**
 * White space to JavaScript (`\s`, with U+FEFF) or to Rust (with U+0085):
 * tab, LF, VT, FF, CR, space, NEL, NBSP, U+1680, U+2000–U+200A, U+2028,
 * U+2029, U+202F, U+205F, U+3000 and U+FEFF.
 */
export function isEdgeSpace(code: number): boolean {
  if (code <= 0x20) return code === 0x20 || (code >= 0x09 && code <= 0x0d);
  if (code < 0x85) return false;
  return (
    code === 0x85 ||
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}

/**
 * `line` without white space (isEdgeSpace) at either end, by one scan from
 * each end: time linear in the line, whatever it holds (a regular
 * expression such as `[\s]+$` is quadratic on a long run of spaces followed
 * by anything else, issue 24).
 */
export function trimEdgeSpace(line: string): string {
  let start = 0;
  let end = line.length;
  while (start < end && isEdgeSpace(line.charCodeAt(start))) start++;
  while (end > start && isEdgeSpace(line.charCodeAt(end - 1))) end--;
  return start === 0 && end === line.length ? line : line.slice(start, end);
}
/** Characters a path shown to a person must not hold: controls, format characters, line and paragraph separators. */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

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
    const line = untrimmed.replace(EDGE_SPACE, "");
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
/** White space at either end of a line, to JavaScript (`\s`, with U+FEFF) or to Rust (with U+0085). */
const EDGE_SPACE = /^[\s\u0085]+|[\s\u0085]+$/g;
/** Characters a path shown to a person must not hold: controls, format characters, line and paragraph separators. */
const UNSEEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/u;

import { fstatSync } from "node:fs";
import { createRequire } from "node:module";

/**
 * Terminal colour, on only when the stream is a terminal and NO_COLOR is
 * unset (or FORCE_COLOR asks for it), so piped output stays plain text.
 */
export interface Style {
  bold(s: string): string;
  dim(s: string): string;
  red(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  cyan(s: string): string;
}

/** Whether output to file descriptor `fd` should get colour. */
export function colourEnabled(fd = 1, env: NodeJS.ProcessEnv = process.env): boolean {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  if (env.FORCE_COLOR !== undefined && env.FORCE_COLOR !== "0") return true;
  // isatty on the descriptor, not process.stdout.isTTY: that would set up the stdout stream this CLI never uses.
  return mayBeTerminal(fd) && ttyModule().isatty(fd) && env.TERM !== "dumb";
}

/**
 * False when `fd` is surely no terminal: a terminal is a character device, so a
 * pipe or a file (how agents and scripts read twinlock) is answered without
 * loading node:tty. A descriptor that cannot be examined is left to isatty.
 */
function mayBeTerminal(fd: number): boolean {
  try {
    return fstatSync(fd).isCharacterDevice();
  } catch {
    return true;
  }
}

/** node:tty, loaded when asked (it loads net and streams). */
function ttyModule(): typeof import("node:tty") {
  return (typeof require === "function" ? require("node:tty") : createRequire(import.meta.url)("node:tty")) as typeof import("node:tty");
}

/** A style that colours when `enabled`, else returns text unchanged. */
export function makeStyle(enabled: boolean): Style {
  const wrap = (open: number, close: number) => (s: string) => (enabled ? `\u001b[${open}m${s}\u001b[${close}m` : s);
  return {
    bold: wrap(1, 22),
    dim: wrap(2, 22),
    red: wrap(31, 39),
    green: wrap(32, 39),
    yellow: wrap(33, 39),
    cyan: wrap(36, 39),
  };
}

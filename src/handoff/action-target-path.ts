/**
 * An action's target read as a path: trimmed, a trailing `:LINE` or
 * `:FROM-TO` range dropped (`cart/cache.go:80-95` → `cart/cache.go`).
 */
export function targetPath(target: string): string {
  return dropLineRange(target.trim());
}

/** `word` without a trailing `:LINE` or `:FROM-TO` range. */
export function dropLineRange(word: string): string {
  return word.replace(/:\d+(-\d+)?$/, "");
}

/** Whether a path has a `..` part (`cart/x.go/..` reads as a file and names its folder). */
export function hasParentPart(p: string): boolean {
  return p.split(/[\\/]/).includes("..");
}

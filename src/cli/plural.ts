/** `n` and the word for that many: `1 file`, `2 files`, `1 criterion result`. */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

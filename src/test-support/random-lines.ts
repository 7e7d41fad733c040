/** `count` lines of 40 hex digits from a seeded generator: a file like the diff attack's, the same on every run. */
export function randomLines(seed: number, count: number): string {
  let x = seed;
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    let line = "";
    for (let k = 0; k < 5; k++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      line += x.toString(16).padStart(8, "0");
    }
    lines.push(line);
  }
  return `${lines.join("\n")}\n`;
}

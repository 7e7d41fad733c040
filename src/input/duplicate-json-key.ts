/**
 * The first object key that appears twice in the same JSON object of `text`
 * (as a dotted path, e.g. `actions` or `actions[0].target`), or undefined.
 * `JSON.parse` keeps the last of two equal keys, a person's viewer may show
 * either, and a model reading the raw text sees both: a record file holding
 * one is refused. `text` must already be valid JSON (call after JSON.parse).
 */
export function findDuplicateJsonKey(text: string): string | undefined {
  let i = 0;
  const skipSpace = () => {
    while (i < text.length && (text[i] === " " || text[i] === "\n" || text[i] === "\r" || text[i] === "\t")) i++;
  };
  const readString = (): string => {
    const start = i;
    i++; // the opening quote
    while (text[i] !== '"') i += text[i] === "\\" ? 2 : 1;
    i++;
    return JSON.parse(text.slice(start, i)) as string;
  };
  // Iterative, with an explicit stack of open containers, so deep nesting cannot overflow the call stack.
  const stack: Array<{ keys: Set<string> | null; path: string; index: number }> = [];
  let found: string | undefined;
  const pathOf = (key: string) => {
    const top = stack[stack.length - 1];
    return top && top.path !== "" ? `${top.path}.${key}` : key;
  };
  let expectKey = false;
  let pendingPath = "";
  while (i < text.length && found === undefined) {
    skipSpace();
    const ch = text[i];
    if (ch === undefined) break;
    if (expectKey && ch === '"') {
      const key = readString();
      const top = stack[stack.length - 1] as { keys: Set<string>; path: string };
      if (top.keys.has(key)) found = pathOf(key);
      top.keys.add(key);
      pendingPath = pathOf(key);
      skipSpace();
      i++; // the colon
      expectKey = false;
      continue;
    }
    if (ch === "{" || ch === "[") {
      const top = stack[stack.length - 1];
      const path = top?.keys === null ? `${top.path}[${top.index}]` : pendingPath;
      stack.push({ keys: ch === "{" ? new Set() : null, path, index: 0 });
      i++;
      expectKey = ch === "{";
      continue;
    }
    if (ch === "}" || ch === "]") {
      stack.pop();
      i++;
      continue;
    }
    if (ch === ",") {
      const top = stack[stack.length - 1];
      if (top?.keys === null) top.index++;
      expectKey = top?.keys !== null;
      i++;
      continue;
    }
    if (ch === '"') {
      readString();
      continue;
    }
    // A number, true, false or null.
    while (i < text.length && !/[\s,\]}]/.test(text[i] as string)) i++;
  }
  return found;
}

/**
 * The value at a JSON Pointer (RFC 6901: `/a/b`, `~1` for `/`, `~0` for `~`)
 * inside `doc`, or undefined when any step is missing. `""` is the document.
 */
export function getPointer(doc: unknown, pointer: string): unknown {
  if (pointer === "") return doc;
  let node: unknown = doc;
  for (const raw of pointer.slice(1).split("/")) {
    const key = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) {
      if (!/^(0|[1-9][0-9]*)$/.test(key)) return undefined;
      node = node[Number(key)];
    } else if (node !== null && typeof node === "object" && Object.hasOwn(node, key)) {
      node = (node as Record<string, unknown>)[key];
    } else return undefined;
  }
  return node;
}

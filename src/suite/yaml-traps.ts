import type * as Yaml from "yaml";
import { loadYaml } from "./load-yaml.js";

const MERGE_TAG = "tag:yaml.org,2002:merge";
/** An anchor or alias name every YAML tool reads to the same end. */
const PLAIN_ANCHOR = /^[A-Za-z0-9_-]+$/;

/**
 * The first thing in a parsed YAML document that YAML tools read differently
 * from twinlock, or a person differently from both, with its offset in the
 * text and what to do; undefined when there is none. Frontmatter and
 * `twinlock.yaml` hold rules, so each of these is refused:
 *
 * - a directive (`%YAML 1.1` switches this library to YAML 1.1: merge keys,
 *   `y`/`n` booleans) or a document marker (`---`, `...`) inside the text;
 * - a merge: a `<<` key (YAML 1.1 tools apply it, twinlock's YAML 1.2 reads a
 *   plain key) or any key tagged `!!merge` (applied here too, first merge
 *   winning where PyYAML's last does);
 * - a key that is an alias (`*k : false`) or a collection: the unique-key
 *   check compares plain keys only, so a rule could be given twice, the
 *   hidden one winning; a key with spaces around its name;
 * - an anchor or alias whose name holds anything but letters, digits, `-`
 *   and `_` (PyYAML ends `&x:true` at the colon);
 * - anything the library warns of (a tag it cannot apply, whose text it
 *   keeps: `!!null APPLY_SAFE` is APPLY_SAFE here and None to PyYAML).
 */
export function findYamlTrap(doc: Yaml.Document): { offset: number; message: string } | undefined {
  const { isAlias, isScalar, visit } = loadYaml();
  const d = doc.directives;
  if (d && (d.yaml.explicit || Object.keys(d.tags).length > 1))
    return {
      offset: 0,
      message: "a YAML directive (%YAML or %TAG), which changes how YAML tools read the rest; remove it",
    };
  if (d && (d.docStart || d.docEnd))
    return {
      offset: (doc as { range?: [number, number, number] }).range?.[0] ?? 0,
      message: "a YAML document marker (--- or ...), which YAML tools read as the start or end of a document; remove it",
    };
  // The library only warns of what it could not resolve (a tag it cannot apply, `!!null APPLY_SAFE`) and keeps the
  // text, which PyYAML reads as something else (None): nothing it warns of is read.
  const warning = doc.warnings[0];
  if (warning)
    return {
      offset: warning.pos[0],
      message: `a tag or value other YAML tools read differently (${warning.message.split("\n")[0]}); write the value plainly, without the tag`,
    };
  let trap: { offset: number; message: string } | undefined;
  const at = (node: unknown) => (node as { range?: [number, number, number] } | null)?.range?.[0] ?? 0;
  visit(doc, {
    Node(_, node) {
      // PyYAML ends an anchor's name at characters this library keeps (`&x:true false` is anchor x on ":true false"
      // there, and false here): only plain names are read the same.
      const name = isAlias(node) ? node.source : node.anchor;
      if (name !== undefined && !PLAIN_ANCHOR.test(name)) {
        trap = {
          offset: at(node),
          message: `an anchor or alias named ${JSON.stringify(name.slice(0, 40))}, whose name YAML tools end at different characters; name it with letters, digits, - and _ only`,
        };
        return visit.BREAK;
      }
      return undefined;
    },
    Pair(_, pair) {
      const key = pair.key;
      const offset = (key as { range?: [number, number, number] } | null)?.range?.[0] ?? 0;
      if (isScalar(key) && key.tag === MERGE_TAG)
        trap = {
          offset,
          message:
            "a key tagged !!merge, which merges another mapping's keys in (as YAML 1.1 tools do with `<<`); write the merged keys out",
        };
      else if (isScalar(key) && key.value === "<<")
        trap = {
          offset,
          message: 'a merge key ("<<"), which YAML 1.1 tools apply and twinlock reads as a plain key; write the merged keys out',
        };
      else if (isAlias(key))
        trap = {
          offset,
          message: `a key given by an alias (*${key.source}), which hides which key it is from the duplicate-key check and from a person; write the key out`,
        };
      else if (key !== null && !isScalar(key))
        trap = { offset, message: "a key that is a list or mapping, which YAML tools read differently; use a plain name" };
      // `"dry_run_required   "` reads as the rule to a person, and is another key to every YAML tool.
      else if (isScalar(key) && typeof key.value === "string" && key.value !== key.value.trim())
        trap = { offset, message: `the key ${JSON.stringify(key.value.slice(0, 60))}, with spaces around its name; write the name alone` };
      return trap ? visit.BREAK : undefined;
    },
  });
  return trap;
}

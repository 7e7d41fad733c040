import { createRequire } from "node:module";
import type { ErrorObject, ValidateFunction } from "ajv";
import { RefusalError } from "../errors/errors.js";

/** One JSON Schema to compile, under the name its `$ref`s and errors use. */
export interface NamedSchema {
  name: string;
  schema: unknown;
}

/** A compiled validator: the problems of one document, each `path: message`. */
export type JsonValidator = (data: unknown) => Array<{ path: string; message: string }>;

type Ajv2020Class = typeof import("ajv/dist/2020.js").default;
let ajvClass: Ajv2020Class | undefined;

/** Ajv (draft 2020-12), loaded on first use only: the twinlock format and `--help` never pay for it. */
function loadAjv(): Ajv2020Class {
  if (!ajvClass) {
    const mod = createRequire(import.meta.url)("ajv/dist/2020.js") as { default: Ajv2020Class };
    ajvClass = mod.default;
  }
  return ajvClass;
}

/**
 * Compile JSON Schemas (draft 2020-12) together, so one may `$ref` another by
 * its `$id` or name, and return one validator per schema name. Nothing is
 * ever fetched: Ajv is given no loader, so a `$ref` to any schema not in the
 * list (a URL on the network included) is a RefusalError naming it, as is a
 * schema Ajv cannot compile.
 */
export function compileJsonSchemas(schemas: readonly NamedSchema[]): Map<string, JsonValidator> {
  const Ajv = loadAjv();
  const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
  const out = new Map<string, JsonValidator>();
  try {
    for (const s of schemas) ajv.addSchema(s.schema as object, s.name);
  } catch (error) {
    throw new RefusalError(`a handoff schema is not a usable JSON Schema: ${firstLine(error)}`, {}, { cause: error });
  }
  for (const s of schemas) {
    let validate: ValidateFunction;
    try {
      validate = ajv.getSchema(s.name) as ValidateFunction;
    } catch (error) {
      const ref = (error as { missingRef?: string }).missingRef;
      throw new RefusalError(
        ref !== undefined
          ? `handoff schema ${s.name} refers to ${ref}, which is not one of the format's schemas; twinlock never fetches a schema: vendor it into the suite and list it`
          : `handoff schema ${s.name} cannot be compiled: ${firstLine(error)}`,
        {},
        { cause: error },
      );
    }
    out.set(s.name, (data) => (validate(data) ? [] : (validate.errors ?? []).map(describeAjvError)));
  }
  return out;
}

/** An Ajv error as `path: message`, with the detail a person needs (the key not allowed, the values allowed). */
function describeAjvError(e: ErrorObject): { path: string; message: string } {
  const where = e.instancePath === "" ? "(top level)" : e.instancePath.slice(1).replace(/\//g, ".");
  const p = e.params as Record<string, unknown>;
  let message = e.message ?? "is invalid";
  if (e.keyword === "additionalProperties")
    message = `unknown field ${JSON.stringify(p.additionalProperty)}; the schema allows no other fields`;
  else if (e.keyword === "required") message = `missing required field ${JSON.stringify(p.missingProperty)}`;
  else if (e.keyword === "enum") message = `must be one of ${(p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
  return { path: where, message };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split("\n")[0] ?? "";
}

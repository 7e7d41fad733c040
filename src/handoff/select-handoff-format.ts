import type { CustomHandoffConfig, HandoffConfig, HandoffFormatName } from "../suite/suite-config.js";
import { customFormat } from "./formats/custom-format.js";
import { MISSION_DIRECTIVES_FORMAT } from "./formats/mission-directives-format.js";
import { TWINLOCK_FORMAT } from "./formats/twinlock-format.js";
import type { HandoffFormat } from "./handoff-format.js";
import type { FormatSchemaFile } from "./read-format-schemas.js";

/** Every handoff format by name: how to build its adapter from the suite's `handoff` config and the schema files it names. */
const FORMATS: Record<HandoffFormatName, (config: HandoffConfig, schemas: ReadonlyMap<string, Buffer>) => HandoffFormat> = {
  twinlock: () => TWINLOCK_FORMAT,
  "mission-directives": () => MISSION_DIRECTIVES_FORMAT,
  custom: (config, schemas) => customFormat(config as CustomHandoffConfig, schemas),
};

/**
 * The handoff format a suite's `twinlock.yaml` names (twinlock when it names
 * none). A custom format is built from the schema files given, which the
 * caller read from the suite (`readFormatSchemas`) and, for a decision,
 * checked against the pin.
 */
export function selectHandoffFormat(handoff: HandoffConfig | undefined, schemas: readonly FormatSchemaFile[] = []): HandoffFormat {
  const config = handoff ?? { format: "twinlock" };
  const format = FORMATS[config.format](config, new Map(schemas.map((s) => [s.path, s.bytes])));
  BUILT_FROM.set(format, { handoff: config, schemas: schemas.map((s) => ({ path: s.path, bytes: s.bytes })) });
  return format;
}

/** What a format was built from: plain data, from which `selectHandoffFormat` builds it again (on a worker thread). */
export interface HandoffFormatRecipe {
  handoff: HandoffConfig;
  schemas: Array<{ path: string; bytes: Uint8Array }>;
}

const BUILT_FROM = new WeakMap<HandoffFormat, HandoffFormatRecipe>();

/** The recipe of a format `selectHandoffFormat` built (undefined for one built otherwise). */
export function handoffFormatRecipe(format: HandoffFormat): HandoffFormatRecipe | undefined {
  if (format === TWINLOCK_FORMAT || format === MISSION_DIRECTIVES_FORMAT)
    return { handoff: { format: format.name } as HandoffConfig, schemas: [] };
  return BUILT_FROM.get(format);
}

/** The format a recipe names, built again (its schema bytes may arrive as plain Uint8Arrays). */
export function handoffFormatOf(recipe: HandoffFormatRecipe): HandoffFormat {
  const schemas = new Map(recipe.schemas.map((s) => [s.path, Buffer.from(s.bytes.buffer, s.bytes.byteOffset, s.bytes.byteLength)]));
  return FORMATS[recipe.handoff.format](recipe.handoff, schemas);
}

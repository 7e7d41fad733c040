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
  return FORMATS[config.format](config, new Map(schemas.map((s) => [s.path, s.bytes])));
}

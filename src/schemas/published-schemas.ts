import { z } from "zod/mini";
import type { $ZodType } from "zod/v4/core";
import { AcceptanceCriteriaSchema, ActionPlanSchema, EvidenceIndexSchema, FindingRegisterSchema } from "../handoff/handoff-records.js";
import { RECEIPT_ROWS } from "../run/receipt-kinds.js";
import { RunFileSchema } from "../run/run-schema.js";
import { SuiteConfigSchema } from "../suite/suite-config.js";

/** Every published JSON Schema, by file name under `schemas/`; generated from the zod schemas that check the data. */
export const PUBLISHED_SCHEMAS: Record<string, $ZodType> = {
  "run-file.schema.json": RunFileSchema,
  ...Object.fromEntries(
    RECEIPT_ROWS.flatMap((row) => {
      const file = row.published;
      return file === null ? [] : [[file, row.schema as unknown as $ZodType]];
    }),
  ),
  "evidence-index.schema.json": EvidenceIndexSchema,
  "finding-register.schema.json": FindingRegisterSchema,
  "action-plan.schema.json": ActionPlanSchema,
  "acceptance-criteria.schema.json": AcceptanceCriteriaSchema,
  "twinlock-config.schema.json": SuiteConfigSchema,
};

/** The text of one published schema, as committed. */
export function renderSchema(name: string, schema: $ZodType): string {
  const json = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" }) as Record<string, unknown>;
  return `${JSON.stringify({ $id: `https://twinlock.dev/schemas/${name}`, ...json }, null, 2)}\n`;
}

import "../schemas/zod-setup.js";
import { z } from "zod";
import { PROMPT_ID_PATTERN } from "./prompt.js";

const duration = z.string().regex(/^[1-9][0-9]*(m|h|d)$/, "a duration such as 30m, 4h or 2d");

/** Body rules of SPEC §2; every field is optional and replaces the default it names. */
export const BodyRulesSchema = z
  .object({
    markers: z.array(z.string().min(1)).optional(),
    all_blocks: z.array(z.string().regex(/^[a-z][a-z0-9_]*$/)).optional(),
    planner_blocks: z.array(z.string().regex(/^[a-z][a-z0-9_]*$/)).optional(),
    executor_blocks: z.array(z.string().regex(/^[a-z][a-z0-9_]*$/)).optional(),
    gate_block: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/)
      .optional(),
    gate_phrases: z.array(z.string().min(1)).optional(),
    authority_block: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/)
      .optional(),
    verification_design_block: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/)
      .optional(),
    /** Shortest list item (characters) that counts when checking for a copied verification list. */
    copied_item_min_length: z.number().int().min(1).max(1000).optional(),
  })
  .strict();

/** What a key may sign: a review, a consent, an apply approval, a freeze (planner agents), lifting a stop. */
export const RIGHTS = ["review", "consent", "apply", "freeze", "stop"] as const;
export type Right = (typeof RIGHTS)[number];

/** One reviewer allowed to sign receipts (SPEC §8). */
export const ReviewerSchema = z
  .object({
    name: z.string().min(1).max(200),
    public_key: z.string().regex(/^ed25519:[A-Za-z0-9+/=]{40,}$/, "ed25519:<base64 of the raw 32-byte key>"),
    rights: z.array(z.enum(RIGHTS)).min(1),
  })
  .strict();

/** Policies of SPEC §8/§9. */
export const PoliciesSchema = z
  .object({
    require_signed_receipts: z.boolean().optional(),
    required_approvals: z.number().int().min(1).max(100).optional(),
    separate_duties: z.boolean().optional(),
    consent_expiry: duration.optional(),
  })
  .strict();

/** The handoff record formats twinlock reads (SPEC §8). */
export const HANDOFF_FORMATS = ["twinlock", "mission-directives", "custom"] as const;
export type HandoffFormatName = (typeof HANDOFF_FORMATS)[number];

/** A relative path with no `..`, no empty or `.` segment, no backslash: it cannot name anything outside its folder. */
const insidePath = (what: string) =>
  z
    .string()
    .min(1)
    .max(500)
    .refine(
      (p) => !p.startsWith("/") && !p.includes("\\") && p.split("/").every((s) => s !== "" && s !== "." && s !== ".."),
      `${what}: a relative path inside the folder, with / between names and no .. (e.g. records/plan.json)`,
    );

/** A JSON Pointer (RFC 6901) into a record: `/id`, `/risk/level`. */
const pointer = z
  .string()
  .max(500)
  .regex(/^(\/([^~]|~[01])*)+$/, "a JSON Pointer (RFC 6901) such as /id or /risk/level");
/** A JSON Pointer to a file's record list: `/actions`, or `""` when the file is the list. */
const listPointer = z
  .string()
  .max(500)
  .regex(/^(\/([^~]|~[01])*)*$/, 'a JSON Pointer (RFC 6901) such as /actions, or "" when the file is the list');

const recordList = { file: insidePath("file"), list: listPointer, id: pointer, summary: pointer.optional() };

/** Where one record kind of a custom format lives: its file, its list, and the fields twinlock needs. */
export const CustomRecordsSchemas = {
  evidence: z.object(recordList).strict(),
  findings: z.object({ ...recordList, evidence: pointer, confidence: pointer.optional() }).strict(),
  actions: z
    .object({
      ...recordList,
      findings: pointer,
      depends_on: pointer.optional(),
      verifies: pointer.optional(),
      target: pointer.optional(),
      risk: pointer.optional(),
      rollback: pointer.optional(),
    })
    .strict(),
  criteria: z.object({ ...recordList, method: pointer.optional() }).strict(),
  unknowns: z.union([
    z.literal("markdown"),
    z
      .object({
        ...recordList,
        status: pointer,
        /** Which values of the status field mean open, resolved and deferred (default: those words). */
        status_values: z
          .object({
            open: z.array(z.string().min(1)).min(1).optional(),
            resolved: z.array(z.string().min(1)).min(1).optional(),
            deferred: z.array(z.string().min(1)).min(1).optional(),
          })
          .strict()
          .optional(),
      })
      .strict(),
  ]),
  stops: z.union([
    z.literal("markdown"),
    z.object({ file: insidePath("file"), list: listPointer, reason: pointer, resolved: pointer }).strict(),
  ]),
} as const;

/**
 * `handoff` in `twinlock.yaml`: which record format the planners write.
 * `custom` names the team's JSON Schemas (files inside the suite, bound by
 * the pin) for each handoff record file, and where each record kind and the
 * fields twinlock needs are (JSON Pointers).
 */
export const HandoffConfigSchema = z.discriminatedUnion(
  "format",
  [
    z.object({ format: z.literal("twinlock") }).strict(),
    z.object({ format: z.literal("mission-directives") }).strict(),
    z
      .object({
        format: z.literal("custom"),
        /** Handoff record file → its JSON Schema (draft 2020-12), a path relative to twinlock.yaml. */
        schemas: z
          .record(insidePath("handoff record file"), insidePath("schema file"))
          .refine((m) => Object.keys(m).length > 0 && Object.keys(m).length <= 20, "name 1 to 20 record files, each with its schema"),
        evidence: CustomRecordsSchemas.evidence,
        findings: CustomRecordsSchemas.findings,
        actions: CustomRecordsSchemas.actions,
        criteria: CustomRecordsSchemas.criteria,
        /** `markdown` (the default): declared by `?UNKNOWN:` lines in the handoff's Markdown files. */
        unknowns: CustomRecordsSchemas.unknowns.optional(),
        /** `markdown` (the default): declared by `!STOP:` lines in the handoff's Markdown files. */
        stops: CustomRecordsSchemas.stops.optional(),
      })
      .strict()
      .superRefine((c, ctx) => {
        const kinds = ["evidence", "findings", "actions", "criteria", "unknowns", "stops"] as const;
        for (const kind of kinds) {
          const m = c[kind];
          if (m === undefined || m === "markdown" || m.file in c.schemas) continue;
          ctx.addIssue({
            code: "custom",
            path: [kind, "file"],
            message: `${m.file} has no schema: list it under handoff.schemas with the JSON Schema that checks it`,
          });
        }
      }),
  ],
  { error: "format must be twinlock, mission-directives or custom" },
);
export type HandoffConfig = z.infer<typeof HandoffConfigSchema>;
export type CustomHandoffConfig = Extract<HandoffConfig, { format: "custom" }>;

/** `twinlock.yaml`: ours, so unknown keys are errors. */
export const SuiteConfigSchema = z
  .object({
    suite_id: z
      .string()
      .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/)
      .max(200)
      .optional(),
    declared_pairs: z.number().int().min(0).optional(),
    body_rules: BodyRulesSchema.optional(),
    reviewers: z.array(ReviewerSchema).optional(),
    revoked: z.array(z.string().regex(/^ed25519:[A-Za-z0-9+/=]{40,}$/, "a public key line ed25519:<base64>")).optional(),
    policies: PoliciesSchema.optional(),
    graph_file: z.string().min(1).optional(),
    /** Globs (relative to this file) of the prompt files; default every `*.md`, so the config can sit at a repository root. */
    prompts: z.array(z.string().min(1).max(500)).max(100).optional(),
    /** Globs of files and folders that are never prompts. */
    exclude: z.array(z.string().min(1).max(500)).max(100).optional(),
    /** The handoff record format (default `twinlock`). */
    handoff: HandoffConfigSchema.optional(),
  })
  .strict();

export type SuiteConfig = z.infer<typeof SuiteConfigSchema>;
export type BodyRules = z.infer<typeof BodyRulesSchema>;

/** The file name that marks a suite root. */
export const CONFIG_FILE = "twinlock.yaml";

export { PROMPT_ID_PATTERN };

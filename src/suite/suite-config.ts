import "../schemas/zod-setup.js";
import { z } from "zod/mini";
import { lazySchemasOf } from "../schemas/lazy-schema.js";
import { PROMPT_ID_PATTERN } from "./prompt.js";

/** What a key may sign: a review, a consent, an apply approval, a freeze (planner agents), lifting a stop. */
export const RIGHTS = ["review", "consent", "apply", "freeze", "stop", "verify"] as const;
export type Right = (typeof RIGHTS)[number];
/** The handoff record formats twinlock reads (SPEC §8). */
export const HANDOFF_FORMATS = ["twinlock", "mission-directives", "custom"] as const;
export type HandoffFormatName = (typeof HANDOFF_FORMATS)[number];

/**
 * A JSON Pointer (RFC 6901) that is not the whole document: `/` and then any
 * text in which every `~` is `~0` or `~1`. The grammar's `*( "/" reference-token )`
 * is written without a group repeated inside a repeated group: as the
 * tokens may hold `/`, one `/` then any such text is the same language, and a
 * regular expression engine checks it in one pass (the nested form,
 * `^(\/([^~]|~[01])*)+$`, backtracked for hours on forty `/` and a `~`).
 */
export const JSON_POINTER_PATTERN = /^\/(?:[^~]|~[01])*$/;
/** A JSON Pointer (RFC 6901), `""` (the whole document) included. */
export const LIST_POINTER_PATTERN = /^(?:\/(?:[^~]|~[01])*)?$/;

const configSchemasOf = lazySchemasOf("suite-config", () => {
  const duration = z.string().check(z.regex(/^[1-9][0-9]*(m|h|d)$/, "a duration such as 30m, 4h or 2d"));
  const blockName = () => z.string().check(z.regex(/^[a-z][a-z0-9_]*$/));
  const nonEmpty = () => z.string().check(z.minLength(1));

  /** Body rules of SPEC §2; every field is optional and replaces the default it names. */
  const BodyRulesSchema = z.strictObject({
    markers: z.optional(z.array(nonEmpty())),
    all_blocks: z.optional(z.array(blockName())),
    planner_blocks: z.optional(z.array(blockName())),
    executor_blocks: z.optional(z.array(blockName())),
    gate_block: z.optional(blockName()),
    gate_phrases: z.optional(z.array(nonEmpty())),
    authority_block: z.optional(blockName()),
    verification_design_block: z.optional(blockName()),
    /** Shortest list item (characters) that counts when checking for a copied verification list. */
    copied_item_min_length: z.optional(z.number().check(z.int(), z.gte(1), z.lte(1000))),
  });

  /** One reviewer allowed to sign receipts (SPEC §8). */
  const ReviewerSchema = z.strictObject({
    name: z.string().check(z.minLength(1), z.maxLength(200)),
    public_key: z.string().check(z.regex(/^ed25519:[A-Za-z0-9+/=]{40,}$/, "ed25519:<base64 of the raw 32-byte key>")),
    rights: z.array(z.enum(RIGHTS)).check(z.minLength(1)),
  });

  /** Policies of SPEC §8/§9. */
  const PoliciesSchema = z.strictObject({
    require_signed_receipts: z.optional(z.boolean()),
    required_approvals: z.optional(z.number().check(z.int(), z.gte(1), z.lte(100))),
    separate_duties: z.optional(z.boolean()),
    consent_expiry: z.optional(duration),
  });

  /** A relative path with no `..`, no empty or `.` segment, no backslash: it cannot name anything outside its folder. */
  const insidePath = (what: string) =>
    z.string().check(
      z.minLength(1),
      z.maxLength(500),
      z.refine(
        (p) => !p.startsWith("/") && !p.includes("\\") && p.split("/").every((s) => s !== "" && s !== "." && s !== ".."),
        `${what}: a relative path inside the folder, with / between names and no .. (e.g. records/plan.json)`,
      ),
    );

  /** A JSON Pointer (RFC 6901) into a record: `/id`, `/risk/level`. */
  const pointer = z.string().check(z.maxLength(500), z.regex(JSON_POINTER_PATTERN, "a JSON Pointer (RFC 6901) such as /id or /risk/level"));
  /** A JSON Pointer to a file's record list: `/actions`, or `""` when the file is the list. */
  const listPointer = z
    .string()
    .check(z.maxLength(500), z.regex(LIST_POINTER_PATTERN, 'a JSON Pointer (RFC 6901) such as /actions, or "" when the file is the list'));

  const recordList = { file: insidePath("file"), list: listPointer, id: pointer, summary: z.optional(pointer) };
  const statusValues = () => z.optional(z.array(nonEmpty()).check(z.minLength(1)));

  /** Where one record kind of a custom format lives: its file, its list, and the fields twinlock needs. */
  const CustomRecordsSchemas = {
    evidence: z.strictObject(recordList),
    findings: z.strictObject({ ...recordList, evidence: pointer, confidence: z.optional(pointer) }),
    actions: z.strictObject({
      ...recordList,
      findings: pointer,
      depends_on: z.optional(pointer),
      verifies: z.optional(pointer),
      target: z.optional(pointer),
      risk: z.optional(pointer),
      rollback: z.optional(pointer),
    }),
    criteria: z.strictObject({ ...recordList, method: z.optional(pointer) }),
    unknowns: z.union([
      z.literal("markdown"),
      z.strictObject({
        ...recordList,
        status: pointer,
        /** Which values of the status field mean open, resolved and deferred (default: those words). */
        status_values: z.optional(z.strictObject({ open: statusValues(), resolved: statusValues(), deferred: statusValues() })),
      }),
    ]),
    stops: z.union([
      z.literal("markdown"),
      z.strictObject({ file: insidePath("file"), list: listPointer, reason: pointer, resolved: pointer }),
    ]),
  } as const;

  /**
   * `handoff` in `twinlock.yaml`: which record format the planners write.
   * `custom` names the team's JSON Schemas (files inside the suite, bound by
   * the pin) for each handoff record file, and where each record kind and the
   * fields twinlock needs are (JSON Pointers).
   */
  const HandoffConfigSchema = z.discriminatedUnion(
    "format",
    [
      z.strictObject({ format: z.literal("twinlock") }),
      z.strictObject({ format: z.literal("mission-directives") }),
      z
        .strictObject({
          format: z.literal("custom"),
          /** Handoff record file → its JSON Schema (draft 2020-12), a path relative to twinlock.yaml. */
          schemas: z
            .record(insidePath("handoff record file"), insidePath("schema file"))
            .check(
              z.refine((m) => Object.keys(m).length > 0 && Object.keys(m).length <= 20, "name 1 to 20 record files, each with its schema"),
            ),
          evidence: CustomRecordsSchemas.evidence,
          findings: CustomRecordsSchemas.findings,
          actions: CustomRecordsSchemas.actions,
          criteria: CustomRecordsSchemas.criteria,
          /** `markdown` (the default): declared by `?UNKNOWN:` lines in the handoff's Markdown files. */
          unknowns: z.optional(CustomRecordsSchemas.unknowns),
          /** `markdown` (the default): declared by `!STOP:` lines in the handoff's Markdown files. */
          stops: z.optional(CustomRecordsSchemas.stops),
        })
        .check(
          z.superRefine((c, ctx) => {
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
        ),
    ],
    { error: "format must be twinlock, mission-directives or custom" },
  );

  /** `twinlock.yaml`: ours, so unknown keys are errors. */
  const SuiteConfigSchema = z.strictObject({
    suite_id: z.optional(z.string().check(z.regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/), z.maxLength(200))),
    declared_pairs: z.optional(z.number().check(z.int(), z.gte(0))),
    body_rules: z.optional(BodyRulesSchema),
    reviewers: z.optional(z.array(ReviewerSchema)),
    revoked: z.optional(z.array(z.string().check(z.regex(/^ed25519:[A-Za-z0-9+/=]{40,}$/, "a public key line ed25519:<base64>")))),
    /** The gates (homes, team stores) whose signatures make a run evidence here: `twinlock trust gate-key` prints each. */
    gate_keys: z.optional(
      z
        .array(
          z.strictObject({
            name: z.string().check(z.minLength(1), z.maxLength(200)),
            public_key: z.string().check(z.regex(/^ed25519:[A-Za-z0-9+/=]{40,}$/, "ed25519:<base64 of the raw 32-byte key>")),
          }),
        )
        .check(z.maxLength(100)),
    ),
    policies: z.optional(PoliciesSchema),
    graph_file: z.optional(nonEmpty()),
    /** Globs (relative to this file) of the prompt files; default every `*.md`, so the config can sit at a repository root. */
    prompts: z.optional(z.array(z.string().check(z.minLength(1), z.maxLength(500))).check(z.maxLength(100))),
    /** Globs of files and folders that are never prompts. */
    exclude: z.optional(z.array(z.string().check(z.minLength(1), z.maxLength(500))).check(z.maxLength(100))),
    /** The handoff record format (default `twinlock`). */
    handoff: z.optional(HandoffConfigSchema),
  });
  return { BodyRulesSchema, ReviewerSchema, PoliciesSchema, HandoffConfigSchema, SuiteConfigSchema };
});

/* The schemas above, each built on first use (see lazy-schema.ts). */
export const BodyRulesSchema = configSchemasOf("BodyRulesSchema");
export const ReviewerSchema = configSchemasOf("ReviewerSchema");
export const PoliciesSchema = configSchemasOf("PoliciesSchema");
export const HandoffConfigSchema = configSchemasOf("HandoffConfigSchema");
export const SuiteConfigSchema = configSchemasOf("SuiteConfigSchema");

export type HandoffConfig = z.infer<typeof HandoffConfigSchema>;
export type CustomHandoffConfig = Extract<HandoffConfig, { format: "custom" }>;
export type SuiteConfig = z.infer<typeof SuiteConfigSchema>;
export type BodyRules = z.infer<typeof BodyRulesSchema>;

/** The file name that marks a suite root. */
export const CONFIG_FILE = "twinlock.yaml";

export { PROMPT_ID_PATTERN };

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
    revoked: z.array(z.string()).optional(),
    policies: PoliciesSchema.optional(),
    graph_file: z.string().min(1).optional(),
    /** Globs (relative to this file) of the prompt files; default every `*.md`, so the config can sit at a repository root. */
    prompts: z.array(z.string().min(1).max(500)).max(100).optional(),
    /** Globs of files and folders that are never prompts. */
    exclude: z.array(z.string().min(1).max(500)).max(100).optional(),
  })
  .strict();

export type SuiteConfig = z.infer<typeof SuiteConfigSchema>;
export type BodyRules = z.infer<typeof BodyRulesSchema>;

/** The file name that marks a suite root. */
export const CONFIG_FILE = "twinlock.yaml";

export { PROMPT_ID_PATTERN };

import { checkTrustConfig } from "../checks/check-trust-config.js";
import { withEnrolledReviewers } from "../passkey/enrolled-reviewers.js";
import "../schemas/zod-setup.js";
import { createHash, type KeyObject } from "node:crypto";
import { lstatSync, realpathSync } from "node:fs";
import path from "node:path";
import { z } from "zod/mini";
import { hashCanonical } from "../crypto/canonical-hash.js";
import { formatDiagnostic } from "../diagnostics/format-diagnostic.js";
import { IntegrityError, RefusalError, UsageError } from "../errors/errors.js";
import { type StepHint, stepHint } from "../errors/step-hint.js";
import type { HandoffFormat } from "../handoff/handoff-format.js";
import { type FormatSchemaFile, formatSchemaPaths, readFormatSchemas } from "../handoff/read-format-schemas.js";
import { selectHandoffFormat } from "../handoff/select-handoff-format.js";
import { readFailureCode, readRegularFile } from "../input/read-regular-file.js";
import { lazySchemasOf } from "../schemas/lazy-schema.js";
import { loadSuite, parseSuiteConfig, type Suite } from "../suite/load-suite.js";
import type { Prompt } from "../suite/prompt.js";
import { CONFIG_FILE, type SuiteConfig } from "../suite/suite-config.js";
import { parsePublicKeyLine, publicKeyLine } from "../trust/keys.js";
import { resolveExactTwin } from "../twin/resolve-exact-twin.js";
import { type GateHome, homeLabel } from "./gate-home.js";
import { readHomeText, updateHomeFile } from "./shared-home.js";

const pinSchemasOf = lazySchemasOf("suite-pins", () => {
  const sha = z.string().check(z.regex(/^sha256:[0-9a-f]{64}$/));

  /** One pinned suite: what the person reviewed and decided to trust (SPEC §9). */
  const PinSchema = z.strictObject({
    suite_id: z.string().check(z.minLength(1), z.maxLength(200)),
    root: z.string().check(z.minLength(1), z.maxLength(4096)),
    config_sha256: sha,
    /** sha256 of each JSON Schema file a custom handoff format names (path relative to twinlock.yaml): bound like the config. */
    handoff_schemas: z.optional(z.record(z.string().check(z.maxLength(500)), sha)),
    /** Every genuine pair at pinning (planner → executor): a re-pairing needs a new pin. */
    pairs: z.record(z.string(), z.string()),
    /**
     * sha256 of each pair member's prompt file at pinning, by prompt ID: the planner and the executor a person reviewed
     * are the files the gate runs, so an edit of either needs a new pin. Pins made before this field have none, and
     * refuse every decision until a person re-pins.
     */
    prompts: z.optional(z.record(z.string(), sha)),
    allow_unsigned: z.boolean(),
    pinned_at: z.string(),
    pinned_by: z.string().check(z.maxLength(200)),
  });

  /**
   * The home's pins and its pinners: the public keys allowed to change them.
   * The first key that pins in a new home becomes its first pinner (the person
   * setting the home up); from then on only a pinner's key can pin, re-pin or
   * unpin, so an agent that can run twinlock cannot choose what it is judged by.
   */
  const PinsFileSchema = z.strictObject({
    format: z.literal("twinlock-pins/1"),
    pinners: z.array(z.string().check(z.maxLength(200))),
    pins: z.array(PinSchema),
  });
  return { PinSchema, PinsFileSchema };
});

/** One pinned suite (built on first use; see lazy-schema.ts). */
export const PinSchema = pinSchemasOf("PinSchema");
export type Pin = z.infer<typeof PinSchema>;
/** The home's pins file. */
const PinsFileSchema = pinSchemasOf("PinsFileSchema");
type PinsFile = z.infer<typeof PinsFileSchema>;

/** Largest `twinlock.yaml` read when pinning or checking a pin. */
const MAX_CONFIG_BYTES = 1024 * 1024;

function sha256Of(bytes: Buffer): string {
  return `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** The real path of a suite folder, or a UsageError naming the given one. */
function realSuiteFolder(given: string): string {
  try {
    return realpathSync(given);
  } catch (error) {
    throw new UsageError(`suite folder ${given} cannot be read (${(error as NodeJS.ErrnoException).code}); give the suite's folder`, {
      cause: error,
    });
  }
}

/** A pinned suite's policy as loaded for a decision, and the digest of that policy. */
export interface PinnedPolicy {
  pin: Pin;
  config: SuiteConfig;
  /**
   * What receipts bind as the policy: the sha256 of `twinlock.yaml` as pinned
   * and as it is now (they are equal, or loading refused); for a custom
   * handoff format, the hash of that digest with each schema file's digest.
   */
  policyDigest: string;
  /** The handoff format of the pinned suite: the only one freeze, present and admission read a handoff in. */
  handoffFormat: HandoffFormat;
  /** True when the suite was pinned with `--allow-unsigned` and does not require signed receipts. */
  unsigned: boolean;
}

/** A pinned suite loaded for a decision: its policy and its prompts. */
export interface PinnedSuite extends PinnedPolicy {
  suite: Suite;
}

/**
 * Pin a suite in the home: its real path, `suite_id`, the sha256 of its
 * `twinlock.yaml`, and its pairs. A suite that does not require signed
 * receipts is refused unless `allowUnsigned`. Replaces an earlier pin of the
 * same suite_id or folder.
 */
export async function pinSuite(
  home: GateHome | (() => GateHome),
  input: { suiteDir: string; allowUnsigned?: boolean; key: KeyObject | undefined; now?: Date },
): Promise<{ pin: Pin; replaced: Pin | undefined; firstPinner: boolean; config: SuiteConfig; suite: Suite }> {
  const by = pinnerLine(input.key, "pin a suite");
  // An existing home says at once whether this key may pin: nothing of the suite is read for a key that may not.
  if (typeof home !== "function") requirePinner(home, readPinsFile(home), by, "pin");
  const given = path.resolve(input.suiteDir);
  const root = realSuiteFolder(given);
  const bytes = readConfigBytes(root);
  const digest = sha256Of(bytes);
  const { config, diagnostics } = parseSuiteConfig(bytes.toString("utf8"));
  const first = diagnostics[0];
  if (first)
    throw new RefusalError(`cannot pin: ${formatDiagnostic(first)}; fix it first`, {
      code: "SUITE_INVALID",
      next: validateStep(given),
    });
  if (!config.suite_id)
    throw new RefusalError(`cannot pin ${given}: its ${CONFIG_FILE} has no suite_id; add one (e.g. suite_id: my-team-prompts)`, {
      code: "SUITE_INVALID",
    });
  const signing = config.policies?.require_signed_receipts === true;
  if (!signing && !input.allowUnsigned)
    throw new RefusalError(
      `cannot pin ${config.suite_id}: it does not require signed receipts, so anyone who can run the gate could approve and consent; add policies.require_signed_receipts: true with reviewers, or pin it allowing unsigned receipts to accept that`,
      { code: "UNSIGNED_SUITE", next: stepHint("trust pin", { suite: given, key: "FILE", "allow-unsigned": "" }) },
    );
  const schemas = readPinnableSchemas(root, config, given);
  const suite = loadSuite(root, { config });
  // A key list the gate would read differently from how it reads (a revoked entry that is no key, a malformed key) is not pinned.
  const trustProblem = checkTrustConfig(suite).find((d) => d.severity === "error");
  if (trustProblem)
    throw new RefusalError(`cannot pin: ${formatDiagnostic(trustProblem)}; fix it first`, {
      code: "SUITE_INVALID",
      next: validateStep(given),
    });
  const pairs = pairsOf(suite);
  // What the gate would refuse to run is not pinned either: a prompt file it cannot read as a prompt (a merge key, a
  // link), and a pair member with a problem (a field it would read leniently).
  const unreadable = suite.diagnostics.find((d) => BLOCKING_LOAD_PROBLEMS.test(d.code));
  if (unreadable)
    throw new RefusalError(`cannot pin: ${formatDiagnostic(unreadable)}; fix it first`, {
      code: "SUITE_INVALID",
      next: validateStep(given),
    });
  for (const id of Object.entries(pairs).flat()) {
    const problem = memberProblem(suite, id);
    if (problem) throw new RefusalError(`cannot pin: ${problem}; fix it first`, { code: "SUITE_INVALID", next: validateStep(given) });
  }
  const pin: Pin = {
    suite_id: config.suite_id,
    root,
    config_sha256: digest,
    ...(schemas.length > 0 ? { handoff_schemas: Object.fromEntries(schemas.map((f) => [f.path, f.sha256])) } : {}),
    pairs,
    prompts: Object.fromEntries(
      Object.entries(pairs)
        .flat()
        .map((id) => [id, (suite.byId.get(id) as Prompt).sha256]),
    ),
    allow_unsigned: !signing,
    pinned_at: (input.now ?? new Date()).toISOString(),
    pinned_by: by,
  };
  // Only now, with a pin that can be made, is a new home created (a refused first pin leaves none to claim).
  const h = typeof home === "function" ? home() : home;
  let replaced: Pin | undefined;
  let firstPinner = false;
  await withPins(h, (file) => {
    firstPinner = file.pinners.length === 0;
    requirePinner(h, file, pin.pinned_by, "pin");
    replaced = file.pins.find((p) => p.suite_id === pin.suite_id || p.root === pin.root);
    return {
      ...file,
      pinners: firstPinner ? [pin.pinned_by] : file.pinners,
      pins: [...file.pins.filter((p) => p.suite_id !== pin.suite_id && p.root !== pin.root), pin],
    };
  });
  return { pin, replaced, firstPinner, config, suite };
}

/** Remove a suite's pin; runs of that suite are refused until it is pinned again. */
export async function unpinSuite(home: GateHome, suiteId: string, key: KeyObject | undefined): Promise<Pin> {
  const by = pinnerLine(key, "unpin a suite");
  let removed: Pin | undefined;
  await withPins(home, (file) => {
    requirePinner(home, file, by, "unpin");
    removed = file.pins.find((p) => p.suite_id === suiteId);
    return { ...file, pins: file.pins.filter((p) => p.suite_id !== suiteId) };
  });
  if (!removed)
    throw new RefusalError(
      `suite ${suiteId} is not pinned in ${home.dir}; pinned: ${
        listPins(home)
          .map((p) => p.suite_id)
          .join(", ") || "none"
      }`,
      { code: "NOT_PINNED" },
    );
  return removed;
}

/** Every pin of the home. */
export function listPins(home: GateHome): Pin[] {
  return readPinsFile(home).pins;
}

/** The public keys allowed to change the home's pins. */
export function listPinners(home: GateHome): string[] {
  return readPinsFile(home).pinners;
}

/** Let one more key change the pins; only an existing pinner may. */
export async function addPinner(home: GateHome, publicKey: string, key: KeyObject | undefined): Promise<void> {
  if (!parsePublicKeyLine(publicKey)) throw new UsageError(`${publicKey.slice(0, 40)} is not an ed25519: public key line; paste NAME.pub`);
  const by = pinnerLine(key, "add a pinner");
  await withPins(home, (file) => {
    if (file.pinners.length === 0)
      throw new RefusalError(`${homeLabel(home)} has no pinner yet; the first pin, signed with a key, makes its key the pinner`, {
        code: "NOT_PINNER",
        next: stepHint("trust pin", { suite: "DIR", key: "FILE" }),
      });
    requirePinner(home, file, by, "add a pinner");
    return { ...file, pinners: file.pinners.includes(publicKey) ? file.pinners : [...file.pinners, publicKey] };
  });
}

function readPinsFile(home: GateHome): PinsFile {
  const file = pinsFile(home);
  return parsePinsFile(readHomeText(file), file);
}

function parsePinsFile(text: string | undefined, file: string): PinsFile {
  if (text === undefined) return { format: "twinlock-pins/1", pinners: [], pins: [] };
  let parsed: ReturnType<typeof PinsFileSchema.safeParse> | undefined;
  try {
    parsed = PinsFileSchema.safeParse(JSON.parse(text));
  } catch {
    parsed = undefined;
  }
  if (!parsed?.success)
    throw new IntegrityError(`${file} is damaged; restore it from backup or re-pin each suite`, { code: "HOME_DAMAGED" });
  return parsed.data;
}

/** The pin of the suite a run names, or undefined. */
export function findPin(home: GateHome, suiteId: string): Pin | undefined {
  return listPins(home).find((p) => p.suite_id === suiteId);
}

/**
 * The pin a suite folder is trusted under, for `init-run --suite DIR`: the
 * folder must be a pinned suite's real path.
 */
export function pinForFolder(home: GateHome, suiteDir: string): Pin {
  const given = path.resolve(suiteDir);
  const real = realSuiteFolder(given);
  const pin = listPins(home).find((p) => p.root === real);
  if (!pin)
    throw new RefusalError(
      `the suite at ${real} is not pinned in ${homeLabel(home)}; a person reviews it and pins it with a pinner's key (pinned: ${
        listPins(home)
          .map((p) => `${p.suite_id} at ${p.root}`)
          .join("; ") || "none"
      })`,
      { code: "NOT_PINNED", attack: "unpinned-suite", next: repinStep(given, suiteIsUnsigned(real)) },
    );
  return pin;
}

/**
 * The policy of the suite a run names, from its pin and never from the run
 * file: the pin must exist, name the same folder, the folder must still be
 * that real folder (not moved, not a symbolic link), and its `twinlock.yaml`
 * must hash as pinned; the policy is parsed from the very bytes hashed. Each
 * refusal names both values. Reads no prompt: for callers that need only the policy.
 */
export function loadPinnedPolicy(home: GateHome, runSuite: { root: string; suite_id: string | null }): PinnedPolicy {
  if (runSuite.suite_id === null)
    throw new RefusalError(
      `the run names a suite without a suite_id (${runSuite.root}); only a pinned suite can be used — start a new run`,
      { code: "NOT_PINNED" },
    );
  const pin = findPin(home, runSuite.suite_id);
  if (!pin)
    throw new RefusalError(`suite ${runSuite.suite_id} is not pinned in ${homeLabel(home)}; a person pins it after reviewing it`, {
      code: "NOT_PINNED",
      attack: "unpinned-suite",
      next: repinStep("DIR"),
    });
  if (pin.root !== runSuite.root)
    throw new RefusalError(
      `the run names suite ${runSuite.suite_id} at ${runSuite.root}, but it is pinned at ${pin.root}; the run cannot choose its suite — start a new run on the pinned suite`,
      { code: "SUITE_CHANGED", attack: "suite-swap" },
    );
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(pin.root);
  } catch {
    throw new RefusalError(
      `the pinned suite folder ${pin.root} (${pin.suite_id}) is gone; restore it there, or re-pin it where it is now`,
      { code: "SUITE_CHANGED" },
    );
  }
  if (stat.isSymbolicLink())
    throw new RefusalError(
      `the pinned suite folder ${pin.root} is now a symbolic link (to ${safeRealpath(pin.root)}); re-pin after reviewing the change`,
      { code: "SUITE_CHANGED", attack: "suite-swap" },
    );
  if (safeRealpath(pin.root) !== pin.root)
    throw new RefusalError(
      `the pinned suite folder ${pin.root} now resolves to ${safeRealpath(pin.root)}; re-pin after reviewing the change`,
      { code: "SUITE_CHANGED", attack: "suite-swap" },
    );
  const bytes = readConfigBytes(pin.root);
  const now = sha256Of(bytes);
  if (now !== pin.config_sha256)
    throw new RefusalError(
      `${CONFIG_FILE} of suite ${pin.suite_id} changed since it was pinned (pinned ${pin.config_sha256}, now ${now}); re-pin after reviewing the change`,
      { code: "SUITE_CHANGED", attack: "policy-changed", next: repinStep(pin.root, suiteIsUnsigned(pin.root)) },
    );
  const { config, diagnostics } = parseSuiteConfig(bytes.toString("utf8"));
  if (diagnostics[0])
    throw new RefusalError(`the pinned suite's ${CONFIG_FILE} is invalid (${formatDiagnostic(diagnostics[0])})`, { code: "SUITE_INVALID" });
  if (config.suite_id !== pin.suite_id)
    throw new RefusalError(`${pin.root} is suite ${config.suite_id ?? "(no suite_id)"}, not the pinned ${pin.suite_id}`, {
      code: "SUITE_CHANGED",
    });
  const unsigned = config.policies?.require_signed_receipts !== true;
  if (unsigned && !pin.allow_unsigned)
    throw new RefusalError(
      `suite ${pin.suite_id} does not require signed receipts but was not pinned allowing unsigned receipts; re-pin it`,
      {
        next: stepHint("trust pin", { suite: pin.root, key: "FILE", "allow-unsigned": "" }),
        code: "UNSIGNED_SUITE",
      },
    );
  const schemas = requirePinnedSchemas(pin, config);
  return {
    pin,
    // The home's enrolled passkeys are trusted like the pinned suite's keys (the agent can write neither).
    config: withEnrolledReviewers(config, home),
    policyDigest: policyDigestOf(now, schemas),
    unsigned,
    handoffFormat: selectHandoffFormat(config.handoff, schemas),
  };
}

/**
 * The schema files a custom handoff format names, read for pinning and
 * checked to build a usable format; any problem refuses the pin.
 */
function readPinnableSchemas(root: string, config: SuiteConfig, given: string): FormatSchemaFile[] {
  try {
    const schemas = readFormatSchemas(root, config.handoff);
    selectHandoffFormat(config.handoff, schemas);
    return schemas;
  } catch (error) {
    if (!(error instanceof RefusalError)) throw error;
    throw new RefusalError(
      `cannot pin ${config.suite_id}: ${error.message}; fix it first`,
      { ...error.details, next: stepHint("readiness", { suite: given }, ["DIR"]) },
      { code: "SUITE_INVALID", cause: error },
    );
  }
}

/**
 * The custom format's schema files as they are now, each refused unless it
 * hashes as pinned (an agent can edit the suite; the schemas judge its
 * handoffs, so they are bound exactly like twinlock.yaml). Returns the very
 * bytes hashed.
 */
function requirePinnedSchemas(pin: Pin, config: SuiteConfig): FormatSchemaFile[] {
  if (formatSchemaPaths(config.handoff).length === 0) return [];
  const schemas = readFormatSchemas(pin.root, config.handoff);
  for (const f of schemas) {
    const pinned = pin.handoff_schemas?.[f.path];
    if (pinned !== f.sha256)
      throw new RefusalError(
        `handoff schema ${f.path} of suite ${pin.suite_id} changed since it was pinned (pinned ${pinned ?? "none"}, now ${f.sha256}); re-pin after reviewing the change`,
        { code: "SUITE_CHANGED", attack: "policy-changed", next: repinStep(pin.root, suiteIsUnsigned(pin.root)) },
      );
  }
  return schemas;
}

/** The policy receipts bind: twinlock.yaml's digest alone, or hashed with the custom format's schema digests. */
function policyDigestOf(configSha: string, schemas: readonly FormatSchemaFile[]): string {
  if (schemas.length === 0) return configSha;
  return hashCanonical({ config: configSha, handoff_schemas: Object.fromEntries(schemas.map((f) => [f.path, f.sha256])) });
}

/**
 * The suite a run names, loaded under its pinned policy (`loadPinnedPolicy`)
 * as far as deciding about `promptIds` and their twins needs, its prompts
 * chosen by the pinned config's bytes as hashed.
 */
export function loadPinnedSuite(
  home: GateHome,
  runSuite: { root: string; suite_id: string | null },
  promptIds: readonly string[],
  loadedPolicy?: PinnedPolicy,
): PinnedSuite {
  // A policy the caller loaded for this run a moment ago is not read again (its twinlock.yaml bytes were hashed then).
  const policy = loadedPolicy ?? loadPinnedPolicy(home, runSuite);
  // Every prompt file is read; those that may declare the run's prompts or their twins are parsed (see LoadSuiteOptions).
  // Prompts are chosen by the pinned config as hashed, never by a second read of twinlock.yaml.
  const suite = loadSuite(policy.pin.root, { promptIds, config: policy.config });
  // A file that may declare one of these prompts but cannot be read as a prompt (or a link the gate does not follow)
  // could be what another tool finds under that ID: a decision waits until it is fixed or removed.
  const unreadable = suite.diagnostics.find((d) => BLOCKING_LOAD_PROBLEMS.test(d.code));
  if (unreadable)
    throw new RefusalError(
      `suite ${policy.pin.suite_id} has a prompt file the gate cannot read as a prompt, which may declare ${promptIds.join(" or ")}: ${formatDiagnostic(unreadable)}; fix or remove it`,
      { code: "SUITE_INVALID", attack: "unreadable-prompt-file", next: validateStep(policy.pin.root) },
    );
  requirePinnedPrompts(policy.pin, suite, promptIds);
  return { ...policy, suite };
}

/** The first error the suite's checks found in prompt `id`'s file, said as a sentence; undefined when there is none. */
function memberProblem(suite: Suite, id: string): string | undefined {
  const prompt = suite.byId.get(id);
  const problem = prompt && suite.diagnostics.find((d) => d.severity === "error" && d.file === prompt.file);
  return problem && `${id} (${prompt.file}) has a problem the gate will not run it with: ${formatDiagnostic(problem)}`;
}

/**
 * Throw unless each of `ids` and its twin that was a pair member at pinning
 * is still the file the person pinned, and has no problem the gate would have
 * to read leniently (a field of the wrong type reads as absent: a
 * `dry_run_required: yes` must not read as "no dry run needed").
 */
function requirePinnedPrompts(pin: Pin, suite: Suite, ids: readonly string[]): void {
  const members = new Set<string>();
  for (const id of ids) {
    members.add(id);
    const twin = suite.byId.get(id)?.pairedPromptId;
    if (twin) members.add(twin);
  }
  for (const id of members) {
    const prompt = suite.byId.get(id);
    if (!prompt) continue;
    const problem = memberProblem(suite, id);
    if (problem)
      throw new RefusalError(`${problem}; fix it and re-pin`, {
        code: "SUITE_INVALID",
        attack: "malformed-prompt",
        next: validateStep(pin.root),
      });
    if (pin.pairs[id] === undefined && !Object.values(pin.pairs).includes(id)) continue;
    if (pin.prompts === undefined)
      throw new RefusalError(
        `suite ${pin.suite_id} was pinned without its prompts' digests (by an older version); a person re-pins it after reviewing it`,
        { code: "SUITE_CHANGED", attack: "prompt-changed", next: repinStep(pin.root, suiteIsUnsigned(pin.root)) },
      );
    const now = prompt.sha256;
    if (pin.prompts[id] !== now)
      throw new RefusalError(
        `${id}'s prompt file (${prompt.file}) changed since suite ${pin.suite_id} was pinned (pinned ${pin.prompts[id] ?? "none"}, now ${now}); a person reviews the change and re-pins it`,
        { code: "SUITE_CHANGED", attack: "prompt-changed", next: repinStep(pin.root, suiteIsUnsigned(pin.root)) },
      );
  }
}

/** Problems that leave a prompt file unread or unparsed (its ID unknown), links the walk does not follow, and text a person cannot see. */
const BLOCKING_LOAD_PROBLEMS = /^(FILE_|FRONTMATTER_|PROMPT_ID_(MISSING|FORMAT)$|SUITE_SYMLINK_SKIPPED$|BODY_HIDDEN_TEXT$)/;

/** Throw unless the planner is paired now exactly as it was when the suite was pinned. */
export function requirePinnedPair(pinned: PinnedSuite, planner: string, executor: string): void {
  const atPin = pinned.pin.pairs[planner];
  if (atPin !== executor)
    throw new RefusalError(
      `the pairing of ${planner} is not the pinned one (pinned ${atPin ?? "no pair"}, now ${executor}); re-pin the suite after reviewing the change`,
      { code: "SUITE_CHANGED", attack: "repaired-twin" },
    );
}

function pairsOf(suite: Suite): Record<string, string> {
  const pairs: Record<string, string> = {};
  for (const p of suite.prompts) {
    if (p.role !== "investigative" || p.pairedPromptId === null) continue;
    const resolved = resolveExactTwin(suite, p.id);
    if (resolved.ok) pairs[p.id] = resolved.twin.executor.id;
  }
  return pairs;
}

async function withPins(home: GateHome, change: (file: PinsFile) => PinsFile): Promise<void> {
  const file = pinsFile(home);
  await updateHomeFile(home, "pins.json", (text) => ({
    text: `${JSON.stringify(PinsFileSchema.parse(change(parsePinsFile(text, file))), null, 1)}\n`,
    result: undefined,
  }));
}

/** The next step of a suite that fails its checks: validate it. */
function validateStep(suiteDir: string): StepHint {
  return stepHint("validate", { suite: suiteDir });
}

/**
 * The next step of a suite not pinned or changed since its pin: a person pins
 * it again with a pinner's key, allowing unsigned receipts when the suite
 * does not require signed ones (the pin would be refused without it).
 */
function repinStep(suiteDir: string, unsigned = false): StepHint {
  return stepHint("trust pin", { suite: suiteDir, key: "FILE", ...(unsigned ? { "allow-unsigned": "" } : {}) });
}

/** Whether the suite at a folder parses and does not require signed receipts; for a hint only, so any failure reads as no. */
function suiteIsUnsigned(root: string): boolean {
  try {
    const { config, diagnostics } = parseSuiteConfig(readConfigBytes(root).toString("utf8"));
    return diagnostics.length === 0 && config.policies?.require_signed_receipts !== true;
  } catch {
    return false;
  }
}

/** The public key line of the key a pin change is made with; a key is required. */
function pinnerLine(key: KeyObject | undefined, what: string): string {
  if (!key)
    throw new RefusalError(
      `to ${what}, sign with a pinner's key file (a new home's first pin makes its key the pinner; a new key is made by keygen): the gate home's pins decide what every run is judged by`,
      { code: "NOT_PINNER", attack: "unauthorized-pin", next: stepHint("keygen", {}, ["NAME"]) },
    );
  return publicKeyLine(key);
}

/** Throw unless `by` may change this home's pins (any key may make the first pin of an empty home). */
function requirePinner(home: GateHome, file: PinsFile, by: string, what: string): void {
  if (file.pinners.length === 0 || file.pinners.includes(by)) return;
  throw new RefusalError(
    `refused: only the gate home's pinners may ${what} (${file.pinners.map((k) => `${k.slice(0, 20)}…`).join(", ")}), and key ${by.slice(0, 20)}… is not one; a pinner reviews the change and pins it in ${home.dir}`,
    { code: "NOT_PINNER", attack: "unauthorized-pin" },
  );
}

function pinsFile(home: GateHome): string {
  return path.join(home.dir, "pins.json");
}

function readConfigBytes(root: string): Buffer {
  return readRegular(path.join(root, CONFIG_FILE), CONFIG_FILE, MAX_CONFIG_BYTES);
}

/**
 * A suite file the pin depends on, read without following a final symlink or
 * blocking on a FIFO (`readRegularFile`). Any failure is a refusal, so
 * admission reports it as a failed check instead of stopping on bad usage.
 */
function readRegular(file: string, what: string, maxBytes: number): Buffer {
  try {
    return readRegularFile(file, what, { noFollow: true, maxBytes, fix: "it is refused" });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    if (readFailureCode(error) === "ENOENT")
      throw new RefusalError(`${what} is missing at ${file}; a pinned suite needs its ${what}`, {
        code: "SUITE_CHANGED",
      });
    throw new RefusalError(error.message, { code: "SUITE_INVALID" });
  }
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return "(unreadable)";
  }
}

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { PACKAGE_ROOT } from "../package-root.js";

/** The SDK packages each subpath export loads (its optional peer dependencies, pinned in package.json). */
export const ADAPTER_PEERS = {
  "twinlock/ai-sdk": ["ai"],
  "twinlock/openai-agents": ["@openai/agents"],
  "twinlock/langgraph": ["@langchain/langgraph", "@langchain/core"],
  "twinlock/claude-agent-sdk": ["@anthropic-ai/claude-agent-sdk"],
} as const;

/** A subpath export of twinlock's that loads an agent SDK. */
export type AdapterSubpath = keyof typeof ADAPTER_PEERS;

/** Exit code of a process ended by a missing SDK: SPEC §6's "bad usage" (the project is not set up for the adapter). */
export const MISSING_SDK_EXIT = 2;

/** Thrown when an adapter's SDK is not installed where twinlock is: its message is the one line to show. */
export class MissingSdkError extends Error {
  readonly code = "TWINLOCK_SDK_MISSING";
  constructor(
    readonly subpath: AdapterSubpath,
    /** The missing packages, each with the version twinlock pins. */
    readonly missing: Array<{ name: string; version: string }>,
    options?: { cause?: unknown },
  ) {
    const many = missing.length > 1;
    super(
      `${subpath} needs ${missing.map((p) => p.name).join(" and ")}, not installed here: twinlock supports ${missing.map((p) => `${p.name} ${p.version}`).join(" and ")} (its pinned optional peer ${many ? "dependencies" : "dependency"}); install ${many ? "them" : "it"} in your project: npm install ${missing.map((p) => `${p.name}@${p.version}`).join(" ")}`,
      options,
    );
    this.name = "MissingSdkError";
  }
}

/** Whether `name` resolves from twinlock's adapters as Node's ESM loader resolves it (the CommonJS resolver on a Node without import.meta.resolve). */
function resolves(name: string): boolean {
  try {
    if (typeof import.meta.resolve === "function") import.meta.resolve(name);
    else createRequire(import.meta.url).resolve(name);
    return true;
  } catch {
    return false;
  }
}

/** The version twinlock pins for an optional peer, from its own package.json (the one place it is written). */
function pinnedVersion(name: string): string {
  const pkg = JSON.parse(readFileSync(path.join(PACKAGE_ROOT, "package.json"), "utf8")) as {
    peerDependencies?: Record<string, string>;
  };
  return pkg.peerDependencies?.[name] ?? "latest";
}

/**
 * The adapter module `load` imports, or, when one of the subpath's SDK
 * packages is not installed, a MissingSdkError naming them with the pinned
 * versions and the `npm install` line (any other failure is rethrown as it
 * is). The adapters import their SDK statically, which ESM resolves before
 * any code runs, so each subpath's entry loads its adapter through this.
 * An import of the subpath nobody catches ends the process with that one
 * line on stderr and exit 2, not Node's report of an uncaught error.
 */
export async function loadAdapter<T>(subpath: AdapterSubpath, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const missing = ADAPTER_PEERS[subpath].filter((name) => !resolves(name));
    if ((error as { code?: unknown })?.code !== "ERR_MODULE_NOT_FOUND" || missing.length === 0) throw error;
    const refused = new MissingSdkError(
      subpath,
      missing.map((name) => ({ name, version: pinnedVersion(name) })),
      { cause: error },
    );
    throw endsUncaughtInOneLine(refused);
  }
}

/**
 * `refusal`, set to end the process with its message as one line on stderr
 * and exit 2 (no stack) should nobody catch it; a caller that catches it
 * gets it as it is.
 */
export function endsUncaughtInOneLine<E extends Error>(refusal: E): E {
  // A monitor, not a handler: it only sees what would end the process anyway, and changes nothing for a caller that catches.
  process.on("uncaughtExceptionMonitor", (seen) => {
    if (seen !== refusal) return;
    process.stderr.write(`twinlock: ${refusal.message}\n`);
    process.exit(MISSING_SDK_EXIT);
  });
  return refusal;
}

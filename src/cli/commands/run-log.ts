import { IntegrityError } from "../../errors/errors.js";
import { openGateHome, resolveHomeDir } from "../../home/gate-home.js";
import { reconcileWithCheckpoint } from "../../home/run-checkpoints.js";
import { cleanText } from "../../input/clean-text.js";
import { verifyChain } from "../../run/event-chain.js";
import { readRunFileUnverified, verifyRunFile } from "../../store/run-file.js";
import type { CommandResult, CommonOptions } from "../command-result.js";
import { storeOption, usesTeamStore } from "../home-option.js";

/** `twinlock log RUN`: the event chain, one line per event (a run file, or a team store's run with `--store`). */
export async function runLog(runFile: string, o: CommonOptions): Promise<CommandResult> {
  const file = usesTeamStore(o) ? await storeOption(o).readUnverified(runFile) : readRunFileUnverified(runFile);
  const actorWidth = Math.min(24, Math.max(8, ...file.events.map((e) => e.actor.length)));
  // Each planner's executor as the receipts name it, so every line of a pair (an admission, a close) shows both.
  const executorOf = new Map<unknown, string>();
  const lines = file.events.map((e) => {
    const d = e.data as Record<string, unknown>;
    const receipt = d.receipt as Record<string, unknown> | undefined;
    if (d.planner !== undefined && typeof receipt?.executor === "string") executorOf.set(d.planner, receipt.executor);
    const executor = executorOf.get(d.planner);
    const pair = d.planner !== undefined && executor !== undefined ? `${d.planner}→${executor}` : d.planner;
    const reason = d.reason ?? receipt?.reason;
    const bits = [
      pair,
      d.revision !== undefined ? `rev ${d.revision}` : receipt?.revision !== undefined ? `rev ${receipt.revision}` : undefined,
      receipt?.decision ?? receipt?.result,
      d.hash ?? receipt?.handoff_hash,
      reason !== undefined ? `!STOP:${reason}` : undefined,
      liftedStops(receipt?.stops),
      d.outcome,
    ].filter((x) => x !== undefined && x !== null);
    // The log is read without trusting the file: every field is printed as one clean line.
    return cleanText(
      `${String(e.seq).padStart(4)}  ${e.at}  ${e.type.padEnd(18)} ${e.actor.padEnd(actorWidth)} ${bits.join("  ")}`,
    ).trimEnd();
  });
  const chain = verifyChain(file.events, file.head);
  lines.push(
    chain.ok ? `chain ok: ${file.events.length} events, head ${file.head}` : `chain BROKEN at event ${chain.seq}: ${chain.reason}`,
  );
  // A broken chain is shown, and fails the command as verify-log does: a script reading the log must not take it as sound.
  return { exitCode: chain.ok ? 0 : 1, text: lines.join("\n"), json: { ok: chain.ok, head: file.head, events: file.events } };
}

/** The stops a lift names, as the log shows them (`lifts 5, 9`); the file is not trusted, so only numbers, and a few. */
function liftedStops(stops: unknown): string | undefined {
  if (!Array.isArray(stops)) return undefined;
  const shown = stops.slice(0, 20).filter((n) => typeof n === "number");
  return `lifts ${shown.join(", ")}${stops.length > shown.length ? ", …" : ""}`;
}

/**
 * `twinlock verify-log RUN`: check the chain, then replay the events and
 * compare with the stored state. Exit 1 naming the first bad event.
 */
export async function runVerifyLog(runFile: string, o: CommonOptions & { exported?: boolean }): Promise<CommandResult> {
  const team = usesTeamStore(o) && !o.exported;
  const store = team ? storeOption(o) : undefined;
  const file = store ? await store.readUnverified(runFile) : readRunFileUnverified(runFile);
  const verdict = verifyRunFile(file);
  if (!verdict.ok) return fail(verdict.seq, verdict.reason);
  if (store) {
    // The store's own read sets the events against the run's row (its head and state): a row edited by hand is refused.
    try {
      await store.read(runFile);
    } catch (error) {
      if (!(error instanceof IntegrityError)) throw error;
      return fail(file.events.length, error.message);
    }
    return {
      exitCode: 0,
      text: `ok: ${file.events.length} events, chain intact, state equals the replay (head ${file.head}); the run's row in ${store.label} agrees`,
      json: { ok: true, events: file.events.length, head: file.head, checkpoint: `the run's row in ${store.label}` },
    };
  }
  if (o.exported)
    return {
      exitCode: 0,
      text: `ok: ${file.events.length} events, chain intact, state equals the replay (head ${file.head}); an export, so no gate home's checkpoint is consulted — compare the head with the store's (twinlock export RUN prints it)`,
      json: { ok: true, events: file.events.length, head: file.head, checkpoint: "not checked: an export" },
    };
  // The checkpoint is checked whenever a gate home is named or exists; without one, say so.
  const explicit = o.home !== undefined || (process.env.TWINLOCK_HOME ?? "") !== "";
  let checkpoint = "not checked: no gate home here (pass --home DIR)";
  let home: ReturnType<typeof openGateHome> | undefined;
  try {
    home = openGateHome(o.home, { create: false });
  } catch (error) {
    if (explicit) throw error;
  }
  if (home) {
    try {
      const r = reconcileWithCheckpoint(home, file, runFile);
      checkpoint =
        r.rolledForward.length > 0
          ? `one write behind the gate home's checkpoint (a crash between writes); the next command rolls it forward with events ${r.rolledForward.map((e) => e.seq).join(", ")}`
          : `equals the gate home's checkpoint in ${home.dir}`;
    } catch (error) {
      if (!(error instanceof IntegrityError)) throw error;
      return fail(file.events.length, error.message);
    }
  }
  return {
    exitCode: 0,
    text: `ok: ${file.events.length} events, chain intact, state equals the replay (head ${file.head}); checkpoint ${checkpoint}`,
    json: { ok: true, events: file.events.length, head: file.head, checkpoint, home: home?.dir ?? resolveHomeDir(o.home) },
  };

  function fail(seq: number, reason: string): CommandResult {
    return { exitCode: 1, text: `verify-log: first bad event ${seq}: ${reason}`, json: { ok: false, first_bad_event: seq, reason } };
  }
}

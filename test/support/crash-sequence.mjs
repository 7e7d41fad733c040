// The crash test's command sequence, shared by the writer that is killed
// and the test that rebuilds the expected file: command k is fully
// determined by k (reason, actor, note and clock), so the run file after k
// commands is the same bytes whoever runs them.

/** The clock of command k: one second per command from a fixed instant. */
export const CRASH_EPOCH = Date.parse("2030-01-01T00:00:00.000Z");

/**
 * Run command k on `runFile` with the library `lib` (the built one in the
 * writer, the source in the test): even k raises !STOP:crash-{k/2}, odd k resolves it.
 * @param {{ raiseStop: Function, resolveStop: Function, openGateHome: Function, folderRunStore: Function }} lib
 * @param {string} runFile
 * @param {number} k
 * @param {string} homeDir the gate home the run is recorded in
 */
export async function runCrashCommand(lib, runFile, k, homeDir) {
  const store = lib.folderRunStore(lib.openGateHome(homeDir));
  const now = () => new Date(CRASH_EPOCH + k * 1000);
  const reason = `crash-${Math.floor(k / 2)}`;
  // The stop request's random part is k too, so the stop's event (which names its request) is the same bytes.
  // And its stamp (the visible order, a clock otherwise): k, which orders the sequence's requests as the clock would.
  const nonce = () => k.toString(16).padStart(16, "0");
  const stamp = () => String(k).padStart(20, "0");
  if (k % 2 === 0) await lib.raiseStop({ run: runFile, store, reason, actor: "crash-writer", note: `command ${k}`, now, nonce, stamp });
  else await lib.resolveStop({ run: runFile, store, reason, actor: "crash-writer", note: `command ${k}`, now });
}

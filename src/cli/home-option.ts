import { folderRunStore } from "../home/folder-run-store.js";
import { type GateHome, openGateHome } from "../home/gate-home.js";
import type { RunStore } from "../store/run-store.js";

/** The gate home from `--home DIR`, else TWINLOCK_HOME, else the XDG state folder; created only where a person sets it up (`trust pin`). */
export function homeOption(o: { home?: string }, options: { create?: boolean } = {}): GateHome {
  return openGateHome(o.home, { create: options.create ?? false });
}

/** The run store the gate home holds (the embedded folder store: runs are run files, named by path). */
export function storeOption(o: { home?: string }): RunStore {
  return folderRunStore(homeOption(o));
}

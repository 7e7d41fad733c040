import { type GateHome, openGateHome } from "../home/gate-home.js";

/** The gate home from `--home DIR`, else TWINLOCK_HOME, else the XDG state folder; created only where a person sets it up (`trust pin`). */
export function homeOption(o: { home?: string }, options: { create?: boolean } = {}): GateHome {
  return openGateHome(o.home, { create: options.create ?? false });
}

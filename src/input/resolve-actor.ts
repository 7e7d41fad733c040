import os from "node:os";
import { parseName } from "./parse-input.js";

/** Who is acting: the given name, else TWINLOCK_ACTOR, else the login name. */
export function resolveActor(given?: string): string {
  const name = given ?? process.env.TWINLOCK_ACTOR ?? safeUser();
  return parseName(name.trim() || "unknown", "actor name");
}

function safeUser(): string {
  try {
    return os.userInfo().username;
  } catch {
    return "unknown";
  }
}

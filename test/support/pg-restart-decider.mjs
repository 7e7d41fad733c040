// A gate server's clients, as its own process, on a PostgreSQL store (built library), that retry what the store
// says is retryable. Usage: node pg-restart-decider.mjs URL HOME RUN_ID INDEX CLIENTS DECISIONS
//   CLIENTS concurrent clients each raise DECISIONS stops p{INDEX}-c{client}-d{k}; a ConflictError is retried (the
//   database restarting says "not reachable … nothing was recorded — try again"); when the store does not say that
//   nothing was recorded (the connection went while committing), the client reads the run first and repeats the
//   decision only if it is not there.
// Prints one JSON line: {told: [reasons the store said were recorded], retried, messages: [distinct errors]}.

import { raiseStop } from "../../dist/gate/hard-stops.js";
import { openGateHome } from "../../dist/home/gate-home.js";
import { postgresRunStore } from "../../dist/store/postgres/postgres-run-store.js";

const [url, homeDir, runId, index, clientsArg, decisionsArg] = process.argv.slice(2);
const store = postgresRunStore(url, openGateHome(homeDir), { connectionTimeoutMillis: 1_000 });
const told = [];
const messages = new Set();
let retried = 0;
const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Whether `reason` is recorded, asked until the database answers. */
async function recorded(reason, until) {
  for (;;) {
    try {
      return (await store.read(runId)).state.stops.some((s) => s.reason === reason);
    } catch (error) {
      if (error.name !== "ConflictError" || Date.now() > until) throw error;
      await pause(50);
    }
  }
}

async function decideOnce(reason) {
  const until = Date.now() + 60_000;
  for (;;) {
    try {
      await raiseStop({ store, run: runId, reason, actor: `server-${index}` });
      return;
    } catch (error) {
      if (error.name !== "ConflictError" || Date.now() > until) throw error;
      messages.add(error.message);
      retried++;
      await pause(50);
      if (!/nothing was recorded/.test(error.message) && (await recorded(reason, until))) return;
    }
  }
}

process.send?.("ready");
await new Promise((resolve) => process.once("message", resolve));
try {
  await Promise.all(
    Array.from({ length: Number(clientsArg) }, async (_, c) => {
      for (let k = 0; k < Number(decisionsArg); k++) {
        const reason = `p${index}-c${c}-d${k}`;
        await decideOnce(reason);
        told.push(reason);
      }
    }),
  );
  process.stdout.write(`${JSON.stringify({ told, retried, messages: [...messages] })}\n`);
} finally {
  await store.close();
}

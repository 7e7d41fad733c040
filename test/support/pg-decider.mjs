// A gate server's decisions, as its own process, on a PostgreSQL store (built library).
// Usage: node pg-decider.mjs URL HOME RUN_ID INDEX CLIENTS DECISIONS
//   raises stops p{INDEX}-c{client}-d{k} from CLIENTS concurrent clients, DECISIONS each;
// or:    node pg-decider.mjs URL HOME RUN_ID INDEX admit EXECUTOR
//   one admission of EXECUTOR; prints "admitted" or "refused".

import { admit } from "../../dist/gate/admit.js";
import { raiseStop } from "../../dist/gate/hard-stops.js";
import { folderRunStore } from "../../dist/home/folder-run-store.js";
import { openGateHome } from "../../dist/home/gate-home.js";
import { postgresRunStore } from "../../dist/store/postgres/postgres-run-store.js";

const [url, homeDir, runId, index, clientsOrOp, countOrExecutor] = process.argv.slice(2);
void folderRunStore;
const store = postgresRunStore(url, openGateHome(homeDir));
process.send?.("ready");
await new Promise((resolve) => process.once("message", resolve));
try {
  if (clientsOrOp === "admit") {
    const r = await admit({ store, run: runId, executor: countOrExecutor, actor: `server-${index}` }).catch((e) => ({
      admitted: false,
      error: e.message,
    }));
    const failed = (r.checks ?? []).filter((c) => !c.ok).map((c) => `${c.name}: ${c.detail}`);
    process.stdout.write(r.admitted ? "admitted\n" : `refused ${r.error ?? failed.join("; ")}\n`);
  } else {
    const clients = Number(clientsOrOp);
    const decisions = Number(countOrExecutor);
    await Promise.all(
      Array.from({ length: clients }, async (_, c) => {
        for (let k = 0; k < decisions; k++)
          await raiseStop({ store, run: runId, reason: `p${index}-c${c}-d${k}`, actor: `server-${index}` });
      }),
    );
  }
} finally {
  await store.close();
}

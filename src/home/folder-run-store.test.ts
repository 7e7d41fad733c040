import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { outboxContract } from "../test-support/outbox-contract.js";
import { runStoreContract } from "../test-support/run-store-contract.js";
import { folderRunStore } from "./folder-run-store.js";
import { openGateHome } from "./gate-home.js";

runStoreContract("the gate-home folder store", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-store-contract-"));
  const home = openGateHome(path.join(dir, "home"), { create: true });
  let n = 0;
  return {
    store: folderRunStore(home),
    newRef: () => path.join(dir, `run-${n++}.json`),
    dispose: async () => rmSync(dir, { recursive: true, force: true }),
  };
});

outboxContract("the gate-home folder store", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "twinlock-outbox-contract-"));
  const home = openGateHome(path.join(dir, "home"), { create: true });
  const store = folderRunStore(home);
  let n = 0;
  return {
    store,
    newRef: () => path.join(dir, `run-${n++}.json`),
    reopen: () => folderRunStore(openGateHome(home.dir)),
    // Closed first: the outbox writes what it held back before its home is removed.
    dispose: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

// A concurrency test writer: after "go", raises and resolves `count` hard
// stops named p{index}-i{k} on one run file, through the built library.
// Usage: node stop-writer.mjs RUN_FILE INDEX COUNT
import { folderRunStore, openGateHome, raiseStop, resolveStop } from "../../dist/index.js";

const [runFile, index, count] = process.argv.slice(2);
process.once("message", async () => {
  try {
    // The gate home comes from TWINLOCK_HOME, inherited from the test.
    const store = folderRunStore(openGateHome());
    for (let k = 0; k < Number(count); k++) {
      const reason = `p${index}-i${k}`;
      await raiseStop({ run: runFile, store, reason, actor: `writer-${index}` });
      await resolveStop({ run: runFile, store, reason, actor: `writer-${index}`, note: `resolved by writer ${index}` });
    }
    process.exit(0);
  } catch (error) {
    process.stderr.write(`${error?.name}: ${error?.message}\n`);
    process.exit(1);
  }
});
process.send("ready");

/**
 * Reference for the hashing section: sha256 of each file named on the
 * command line with node:crypto, one stream at a time, printed like
 * sha256sum. It shows what Node itself reaches on this machine.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";

for (const file of process.argv.slice(2)) {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) hash.update(chunk);
  process.stdout.write(`${hash.digest("hex")}  ${file}\n`);
}

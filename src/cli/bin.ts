#!/usr/bin/env node
import { main } from "./main.js";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`twinlock: internal error: ${error?.stack ?? error}\n`);
    process.exitCode = 1;
  },
);

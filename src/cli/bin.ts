#!/usr/bin/env node
import { main } from "./main.js";
import { writeOutput } from "./write-output.js";

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    writeOutput(2, `twinlock: internal error: ${error?.stack ?? error}\n`);
    process.exitCode = 1;
  },
);

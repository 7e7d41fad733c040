/**
 * The script runtimes (interpreters) twinlock knows by name: a tool's package
 * script runs under one (`#!/usr/bin/env node`), and so does an in-process
 * SDK agent (`node agent.mjs`). The one list both the sandbox's program
 * identification and the CLI's notes read.
 */
export const SCRIPT_RUNTIMES: ReadonlySet<string> = new Set(["node", "nodejs", "bun", "deno", "tsx"]);

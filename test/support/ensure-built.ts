/** The built-CLI helpers live with the library's other test helpers (src/test-support/ensure-built.ts). */
export * from "../../src/test-support/ensure-built.js";

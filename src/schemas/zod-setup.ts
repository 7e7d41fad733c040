import { config } from "zod/mini";
import en from "zod/v4/locales/en.js";

/**
 * Zod compiles a fast parser for each object schema with `new Function` on
 * its first use. A command parses each schema a few times and exits, so the
 * compiling costs more than it saves: every module that defines schemas
 * imports this first, before its schemas are made.
 *
 * The schemas the commands check their files with are `zod/mini` ones: the
 * same core, parses and messages as classic zod, but each schema is built
 * once rather than once per chained method, without classic's JSON Schema
 * hooks and cycle bookkeeping, which a process that lives 150 ms feels.
 * Mini leaves the messages to whoever sets a locale, so English is set here;
 * classic zod (the server's request schemas) sets the same one only when none
 * is set. The config is zod core's, shared by both.
 */
config({ jitless: true, ...en() });

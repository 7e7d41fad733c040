import { config } from "zod";

/**
 * Zod compiles a fast parser for each object schema with `new Function` on
 * its first use. A command parses each schema a few times and exits, so the
 * compiling costs more than it saves: every module that defines schemas
 * imports this first, before its schemas are made.
 */
config({ jitless: true });

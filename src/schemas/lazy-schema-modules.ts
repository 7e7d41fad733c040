/**
 * Every module that defines lazily built schemas (lazy-schema.ts), imported
 * for their effect: once these have loaded, LAZY_SCHEMAS names every schema
 * the generated fast validators must cover. fast-validators.test.ts checks
 * that no such module is missing here.
 */
import "../handoff/handoff-records.js";
import "../handoff/manifest-schema.js";
import "../home/gate-home.js";
import "../home/run-checkpoints.js";
import "../home/suite-pins.js";
import "../passkey/reviewer-registry.js";
import "../run/apply-event.js";
import "../run/run-schema.js";
import "../run/webauthn-signature-schema.js";
import "../suite/suite-config.js";

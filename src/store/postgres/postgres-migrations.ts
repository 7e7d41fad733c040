/**
 * The PostgreSQL schema, as numbered migrations applied in order by
 * `twinlock db migrate` (SPEC §10 team store). A migration is never edited
 * once released: a change is a new one. The `twinlock_schema` table records
 * which are applied; a database holding a newer one than this build knows
 * is refused, never written.
 */
export const POSTGRES_MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: "runs, events, consumed consents",
    sql: `
CREATE TABLE twinlock_runs (
  run_id      text PRIMARY KEY CHECK (run_id ~ '^run_[0-9a-f]{16}$'),
  -- The name its creator gave it (as a run file names a folder-store run); unique, and never another run's ID.
  name        text UNIQUE,
  home_id     text NOT NULL,
  revision    integer NOT NULL CHECK (revision >= 1),
  head        text NOT NULL,
  state       text NOT NULL,
  created_at  timestamptz NOT NULL,
  updated_at  timestamptz NOT NULL
);
CREATE INDEX twinlock_runs_updated ON twinlock_runs (updated_at DESC, run_id);
-- Append-only: one row per event, keyed by (run, seq); the hash chain is in the events themselves.
-- Events and state are kept as the exact JSON text twinlock wrote (jsonb would refuse a NUL and reorder keys).
CREATE TABLE twinlock_events (
  run_id  text NOT NULL REFERENCES twinlock_runs (run_id),
  seq     integer NOT NULL CHECK (seq >= 1),
  hash    text NOT NULL,
  event   text NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE FUNCTION twinlock_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'twinlock events are append-only';
END $$;
CREATE TRIGGER twinlock_events_no_change BEFORE UPDATE OR DELETE ON twinlock_events
  FOR EACH ROW EXECUTE FUNCTION twinlock_events_append_only();
-- A consent is used once, by whichever server admits first.
CREATE TABLE twinlock_consumed_consents (
  consent_hash text PRIMARY KEY,
  run_id       text NOT NULL REFERENCES twinlock_runs (run_id),
  planner      text NOT NULL,
  executor     text NOT NULL,
  at           timestamptz NOT NULL
);
`,
  },
  {
    version: 2,
    name: "the shared gate home: trust files, frozen bytes, sessions, passkey challenges",
    sql: `
-- The gate home's trust files (pins.json, reviewers.json, tokens/…), by their name in a home folder; each server's
-- home folder is a copy brought up to date by version. A removed file keeps its row with a NULL body, so every
-- copy learns of the removal. Changes take an advisory lock first, so versions become visible in order.
CREATE SEQUENCE twinlock_home_version;
CREATE TABLE twinlock_home_files (
  name     text PRIMARY KEY CHECK (name IN ('pins.json', 'reviewers.json') OR name ~ '^tokens/tok_[0-9a-f]{16}[.](json|key)$'),
  body     text,
  version  bigint NOT NULL UNIQUE
);
-- Frozen handoff bytes, by sha256: a file frozen twice, or by two runs, is stored once.
CREATE TABLE twinlock_frozen (
  sha256  text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  bytes   bytea NOT NULL
);
-- Signed-in reviewers, by the sha256 of the session ID (the ID itself is only in the reviewer's cookie).
CREATE TABLE twinlock_sessions (
  id_sha256   text PRIMARY KEY,
  reviewer    text NOT NULL,
  rights      text NOT NULL,
  csrf        text NOT NULL,
  expires_ms  bigint NOT NULL
);
CREATE INDEX twinlock_sessions_reviewer ON twinlock_sessions (reviewer);
-- Passkey challenges waiting for an answer (a decision's receipt, or a sign-in); each is taken once.
CREATE TABLE twinlock_challenges (
  id          text PRIMARY KEY,
  kind        text NOT NULL CHECK (kind IN ('decision', 'signin')),
  reviewer    text NOT NULL,
  request     text NOT NULL,
  challenge   bytea NOT NULL,
  at_ms       bigint NOT NULL,
  expires_ms  bigint NOT NULL
);
`,
  },
  {
    version: 3,
    name: "the gate's own signing key and the other gates it trusts (trust files), and each run's signed head",
    sql: `
-- The team store's Ed25519 key (gate-key.pem), made once under the trust files' lock: it signs the gate's own
-- records, checkpoint heads and exports. Only the database's owner and the gate servers can read it, never an agent.
-- gate-keys.json: the other gates whose signed runs it imports (twinlock trust add-gate-key).
ALTER TABLE twinlock_home_files DROP CONSTRAINT twinlock_home_files_name_check;
ALTER TABLE twinlock_home_files ADD CONSTRAINT twinlock_home_files_name_check
  CHECK (name IN ('pins.json', 'reviewers.json', 'gate-key.pem', 'gate-keys.json') OR name ~ '^tokens/tok_[0-9a-f]{16}[.](json|key)$');
-- The gate's signature of each run's head as this store recorded it (JSON; NULL for runs written before gates signed).
ALTER TABLE twinlock_runs ADD COLUMN head_signature text;
`,
  },
  {
    version: 4,
    name: "sign-ins sealed in the browser under one key every server shares, and the seals already used",
    sql: `
-- The key every server seals sign-in challenges with (made once, by the first server to ask): an anonymous
-- sign-in start stores nothing, so no flood of starts can fill the database or push a reviewer's sign-in out.
CREATE TABLE twinlock_signin_key (
  id   integer PRIMARY KEY CHECK (id = 1),
  key  bytea NOT NULL CHECK (length(key) = 32)
);
-- Each seal's MAC once it is used, until it would have expired: a seal is taken once, through any server.
CREATE TABLE twinlock_used_signins (
  mac         text PRIMARY KEY,
  expires_ms  bigint NOT NULL
);
-- Sign-in challenges are no longer kept here.
DELETE FROM twinlock_challenges WHERE kind = 'signin';
`,
  },
  {
    version: 5,
    name: "webhooks and the durable outbox of their notifications",
    sql: `
-- The receivers a person configured (twinlock notify add); the secret signs every delivery and no agent reads it.
CREATE TABLE twinlock_webhooks (
  id          text PRIMARY KEY CHECK (id ~ '^wh_[0-9a-f]{16}$'),
  url         text NOT NULL,
  events      text NOT NULL,
  format      text NOT NULL CHECK (format IN ('json', 'slack', 'teams')),
  secret      text NOT NULL,
  created_at  text NOT NULL
);
-- Each notification waiting for one webhook, put in by the decision's own transaction; deleted once delivered.
CREATE TABLE twinlock_outbox (
  id               text PRIMARY KEY,
  webhook_id       text NOT NULL REFERENCES twinlock_webhooks (id) ON DELETE CASCADE,
  run_id           text NOT NULL,
  seq              integer NOT NULL,
  part             integer NOT NULL,
  notification     text NOT NULL,
  attempts         integer NOT NULL DEFAULT 0,
  next_attempt_ms  bigint NOT NULL,
  last_error       text
);
CREATE INDEX twinlock_outbox_order ON twinlock_outbox (run_id, webhook_id, seq, part);
`,
  },
  {
    version: 6,
    name: "the GitHub check run as a webhook format of its own (serve --github-app)",
    sql: `
-- The GitHub check run rides on the outbox as one more format, delivered by serve --github-app, never by a POST of the body.
ALTER TABLE twinlock_webhooks DROP CONSTRAINT twinlock_webhooks_format_check;
ALTER TABLE twinlock_webhooks ADD CONSTRAINT twinlock_webhooks_format_check CHECK (format IN ('json', 'slack', 'teams', 'github-check'));
`,
  },
  {
    version: 7,
    name: "the outbox's pending index: a look at what is due reads what waits, never the deliveries given up on",
    sql: `
-- The same contract as the gate home's notify/pending/: due's cost is what waits (GAVE_UP is -1), not every row kept.
CREATE INDEX twinlock_outbox_pending ON twinlock_outbox (run_id, webhook_id, seq, part) WHERE next_attempt_ms <> -1;
`,
  },
];

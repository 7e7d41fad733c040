import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

/** A handoff in the public Mission Directives format: its four record files and its Markdown report. */
export interface MdHandoff {
  evidence: {
    snapshot_id: string;
    captured_at: string;
    project_revision: string;
    environment: object;
    sources: Array<Record<string, unknown>>;
  };
  findings: { snapshot_id: string; findings: Array<Record<string, unknown>> };
  actions: { snapshot_id: string; actions: Array<Record<string, unknown>> };
  criteria: { criteria: Array<Record<string, unknown>> };
  report: string;
}

const AT = "2025-05-02T09:00:00Z";

const source = (id: string, kind: string, location: string, summary: string) => ({
  evidence_id: id,
  kind,
  location,
  trust: "trusted",
  captured_at: AT,
  content_hash: null,
  summary,
});

const finding = (id: string, title: string, evidence: string[], severity = "high") => ({
  finding_id: id,
  title,
  status: "validated",
  severity,
  confidence: "high",
  evidence_ids: evidence,
  owner: null,
});

const action = (
  id: string,
  description: string,
  findings: string[],
  deps: string[],
  surface: string[],
  verify: string[],
  rollback: object | undefined,
  level = "medium",
) => ({
  action_id: id,
  finding_ids: findings,
  description,
  dependencies: deps,
  change_surface: surface,
  risk: { level, blast_radius: surface.length > 1 ? "several services" : "one service" },
  authorization_required: level === "high",
  ...(rollback ? { rollback } : {}),
  verification_ids: verify,
  owner: null,
});

const criterion = (id: string, statement: string, method: string, required = true) => ({
  verification_id: id,
  statement,
  method,
  required,
  evidence_expected: [],
});

const frame = (snapshot: string, sources: MdHandoff["evidence"]["sources"]) => ({
  snapshot_id: snapshot,
  captured_at: AT,
  project_revision: "9f1c2ab",
  environment: { name: "staging" },
  sources,
});

/** A database migration: add a NOT NULL column to a hot table without locking it. */
export function databaseMigrationHandoff(): MdHandoff {
  const snap = "SNAP-2025-05-02-orders";
  return {
    evidence: frame(snap, [
      source("EVIDENCE-1", "query-plan", "db/orders EXPLAIN ALTER", "ALTER TABLE orders ADD COLUMN takes an ACCESS EXCLUSIVE lock"),
      source("EVIDENCE-2", "metric", "grafana/orders-write-rate", "orders sees 1.2k writes/s at peak"),
      source("EVIDENCE-3", "file", "migrations/0042_add_region.sql", "the migration adds region NOT NULL DEFAULT in one statement"),
    ]),
    findings: {
      snapshot_id: snap,
      findings: [
        finding("FINDING-1", "The one-step migration blocks writes to orders for minutes", ["EVIDENCE-1", "@EVIDENCE:EVIDENCE-2"]),
        finding("FINDING-2", "The default is computed per row, rewriting the table", ["EVIDENCE-3"], "medium"),
      ],
    },
    actions: {
      snapshot_id: snap,
      actions: [
        action("ACTION-1", "Add region as a nullable column", ["FINDING-1"], [], ["migrations/0042_add_region.sql"], ["VERIFY-1"], {
          steps: "ALTER TABLE orders DROP COLUMN region",
        }),
        action(
          "ACTION-2",
          "Backfill region in batches of 5k rows",
          ["FINDING-2"],
          ["ACTION-1"],
          ["jobs/backfill_region.py"],
          ["VERIFY-2"],
          { steps: "stop the job; the column stays nullable" },
        ),
        action(
          "ACTION-3",
          "Add the NOT NULL constraint as NOT VALID, then validate it",
          ["#FINDING:FINDING-1"],
          ["+ACTION:ACTION-2"],
          ["migrations/0043_region_not_null.sql"],
          ["VERIFY-1", "=VERIFY:VERIFY-3"],
          { steps: "ALTER TABLE orders DROP CONSTRAINT region_not_null" },
          "high",
        ),
      ],
    },
    criteria: {
      criteria: [
        criterion("VERIFY-1", "No lock on orders is held for more than 2 s", "pg_locks sampling during the migration"),
        criterion("VERIFY-2", "Every row has a region", "SELECT count(*) FROM orders WHERE region IS NULL = 0"),
        criterion("VERIFY-3", "Write latency p99 stays under 50 ms", "grafana/orders-write-latency", false),
      ],
    },
    report: [
      "# Orders: add region without locking",
      "",
      "Plan: +ACTION:ACTION-1, then +ACTION:ACTION-2, then +ACTION:ACTION-3 (see #FINDING:FINDING-1).",
      "",
      "## Unknowns",
      "",
      "- ?UNKNOWN:UNKNOWN-1 (open) Does the nightly export read orders with a long transaction? owner: data team",
      "- ?UNKNOWN:UNKNOWN-2 (resolved) Is logical replication on? No: checked in pg_settings.",
      "",
      "## Stops",
      "",
      "- !STOP:missing-backup (resolved) snapshot orders-2025-05-02 taken at 08:40",
      "",
    ].join("\n"),
  };
}

/** A dependency upgrade: a major version of an HTTP client with a changed retry default. */
export function dependencyUpgradeHandoff(): MdHandoff {
  const snap = "SNAP-deps-77";
  return {
    evidence: frame(snap, [
      source("EVIDENCE-CHANGELOG", "changelog", "node_modules/undici/CHANGELOG.md", "v6 retries idempotent requests twice by default"),
      source("EVIDENCE-CALLS", "grep", "src/**/*.ts", "14 call sites use the client for POST with idempotency keys"),
    ]),
    findings: {
      snapshot_id: snap,
      findings: [
        finding("FINDING-RETRY", "The new retry default could double-charge on POST without an idempotency key", [
          "EVIDENCE-CHANGELOG",
          "EVIDENCE-CALLS",
        ]),
      ],
    },
    actions: {
      snapshot_id: snap,
      actions: [
        action(
          "ACTION-PIN",
          "Upgrade to 6.2.1 with retries disabled for POST",
          ["FINDING-RETRY"],
          [],
          ["package.json", "src/http/client.ts"],
          ["VERIFY-TESTS"],
          {
            steps: "revert the lockfile commit",
          },
        ),
      ],
    },
    criteria: { criteria: [criterion("VERIFY-TESTS", "The payment contract tests pass", "npm test -- payments")] },
    report: "# undici 6 upgrade\n\nOnly +ACTION:ACTION-PIN changes code.\n",
  };
}

/** A security fix after an incident: a leaked token and an unauthenticated admin route. */
export function securityIncidentHandoff(): MdHandoff {
  const snap = "SNAP-INC-4711";
  return {
    evidence: frame(snap, [
      {
        ...source("EVIDENCE-LOG", "access-log", "s3://logs/2025-05-01/admin.log", "GET /admin/export from 203.0.113.9 without a session"),
        trust: "mixed",
      },
      source("EVIDENCE-ROUTE", "file", "src/routes/admin.ts:41", "export route registered before the auth middleware"),
      source("EVIDENCE-TOKEN", "secret-scan", "ci/job/88812", "deploy token printed in a CI log"),
    ]),
    findings: {
      snapshot_id: snap,
      findings: [
        finding(
          "FINDING-AUTHZ",
          "The admin export route is reachable without authentication",
          ["EVIDENCE-LOG", "EVIDENCE-ROUTE"],
          "critical",
        ),
        finding("FINDING-TOKEN", "A deploy token is exposed in CI logs", ["EVIDENCE-TOKEN"], "high"),
      ],
    },
    actions: {
      snapshot_id: snap,
      actions: [
        action(
          "ACTION-ROTATE",
          "Rotate the deploy token and scrub the CI log",
          ["FINDING-TOKEN"],
          [],
          ["ci secrets"],
          ["VERIFY-OLD-TOKEN"],
          undefined,
          "high",
        ),
        action(
          "ACTION-AUTH",
          "Register the export route after the auth middleware",
          ["FINDING-AUTHZ"],
          [],
          ["src/routes/admin.ts"],
          ["VERIFY-401"],
          {
            steps: "revert the commit; keep the WAF rule",
          },
        ),
        action(
          "ACTION-WAF",
          "Keep a WAF rule for /admin/* until the fix is verified",
          ["FINDING-AUTHZ"],
          ["ACTION-AUTH"],
          ["waf"],
          ["VERIFY-401"],
          {
            steps: "delete the rule",
          },
        ),
      ],
    },
    criteria: {
      criteria: [
        criterion("VERIFY-401", "GET /admin/export without a session returns 401", "curl against staging"),
        criterion("VERIFY-OLD-TOKEN", "The old token is rejected by the deploy API", "deploy API call with the old token"),
      ],
    },
    report: "# Incident 4711\n\n- ?UNKNOWN:UNKNOWN-SCOPE Was data exported before the fix? owner: security\n",
  };
}

/** Write a Mission Directives handoff into `dir`. */
export function writeMdHandoff(dir: string, h: MdHandoff): void {
  mkdirSync(dir, { recursive: true });
  const write = (name: string, value: unknown) => writeFileSync(path.join(dir, name), `${JSON.stringify(value, null, 2)}\n`);
  write("evidence_index.json", h.evidence);
  write("finding_register.json", h.findings);
  write("action_plan.json", h.actions);
  write("acceptance_criteria.json", h.criteria);
  writeFileSync(path.join(dir, "report.md"), h.report);
}

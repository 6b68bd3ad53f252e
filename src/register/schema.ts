/**
 * The register's SQLite schema and its migrations (issue 7, item 1). `PRAGMA user_version`
 * holds the schema version; `PRAGMA application_id` marks the file as a payouts register.
 * Migration N takes a register from version N to N + 1; a register newer than this payouts
 * is refused rather than guessed at.
 */

/** "PYOT": tells a payouts register from any other SQLite file. */
export const APPLICATION_ID = 0x50594f54;

/** Each entry migrates from its index to the next version. */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE scopes (
    id INTEGER PRIMARY KEY,
    service TEXT NOT NULL,
    integrator_id TEXT NOT NULL,
    -- Random key of the payee fingerprints: without it the hashes reveal no account.
    secret BLOB NOT NULL,
    login TEXT,
    created_at TEXT NOT NULL,
    last_used_at TEXT NOT NULL,
    UNIQUE (service, integrator_id)
  );
  CREATE TABLE runs (
    id TEXT PRIMARY KEY,
    scope_id INTEGER NOT NULL REFERENCES scopes (id),
    sheet TEXT NOT NULL,
    digest TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    started_at TEXT NOT NULL,
    heartbeat_at TEXT NOT NULL,
    finished_at TEXT,
    rows INTEGER,
    statuses TEXT,
    exit_code INTEGER
  );
  CREATE INDEX runs_by_scope ON runs (scope_id, started_at);
  CREATE TABLE payouts (
    scope_id INTEGER NOT NULL REFERENCES scopes (id),
    reference TEXT NOT NULL,
    amount TEXT NOT NULL,
    currency TEXT NOT NULL,
    rail TEXT NOT NULL,
    payee TEXT NOT NULL,
    payee_hint TEXT NOT NULL,
    state TEXT NOT NULL,
    idempotency_key TEXT NOT NULL,
    beneficiary_id TEXT,
    recipient_id TEXT,
    simulation_id TEXT,
    transaction_id TEXT,
    error TEXT,
    run_id TEXT NOT NULL,
    sheet TEXT NOT NULL,
    paid_at TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (scope_id, reference)
  ) WITHOUT ROWID;
  CREATE INDEX payouts_by_transaction ON payouts (transaction_id) WHERE transaction_id IS NOT NULL;
  CREATE INDEX payouts_by_run ON payouts (run_id);
  CREATE INDEX payouts_by_time ON payouts (scope_id, updated_at);
  CREATE TABLE payees (
    scope_id INTEGER NOT NULL REFERENCES scopes (id),
    kind TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    id TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (scope_id, kind, fingerprint)
  ) WITHOUT ROWID;
  CREATE TABLE events (
    integrator_id TEXT NOT NULL,
    resource_id TEXT NOT NULL,
    operation TEXT NOT NULL,
    success INTEGER NOT NULL,
    message TEXT,
    occurred_at TEXT NOT NULL,
    received_at TEXT NOT NULL,
    payload TEXT NOT NULL,
    PRIMARY KEY (integrator_id, resource_id, operation)
  ) WITHOUT ROWID;
  CREATE INDEX events_by_resource ON events (resource_id);
  `,
];

/** The version this payouts writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

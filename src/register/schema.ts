/**
 * The register's SQLite schema and its migrations. `PRAGMA user_version`
 * holds the schema version; `PRAGMA application_id` marks the file as a payouts register.
 * Migration N takes a register from version N to N + 1; a register newer than this payouts
 * is refused rather than guessed at.
 */

import { RegisterError } from '../errors.js';
import { historyRowIdSql } from './history-row.js';

/** "PYOT": tells a payouts register from any other SQLite file. */
export const APPLICATION_ID = 0x50594f54;

/**
 * Payee histories may write a payday that is also its account's last payout as that account's
 * index, under `paydays` (history-text.ts). A payouts from before would see no paydays in such a
 * history, so the version moves on and it refuses the register; the histories already written
 * are left as they are (they read as ever) and each takes the shorter form when it next changes,
 * so the migration itself changes no row.
 */
const HISTORY_PAYDAYS_ONCE = 'SELECT 1';

/**
 * Each payee history under a row id made of its payee key (history-row.ts), found in one descent
 * of the table instead of two; (scope, payee) stays unique. A history whose id another took first
 * is written under one SQLite chooses, and found by its key. The trigger keeps the rule for every
 * writer, a payouts from before still running included: a history written under another id
 * while its own is free moves there, so that a free id always means no history.
 */
const HISTORY_ROW_IDS = `
  CREATE TABLE payee_history_by_id (
    id INTEGER PRIMARY KEY,
    scope_id INTEGER NOT NULL REFERENCES scopes (id),
    payee TEXT NOT NULL,
    history TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (scope_id, payee)
  );
  INSERT OR IGNORE INTO payee_history_by_id (id, scope_id, payee, history, updated_at)
    SELECT ${historyRowIdSql('payee')}, scope_id, payee, history, updated_at FROM payee_history;
  INSERT INTO payee_history_by_id (scope_id, payee, history, updated_at)
    SELECT scope_id, payee, history, updated_at FROM payee_history AS held
    WHERE NOT EXISTS (
      SELECT 1 FROM payee_history_by_id AS moved WHERE moved.scope_id = held.scope_id AND moved.payee = held.payee
    );
  DROP TABLE payee_history;
  ALTER TABLE payee_history_by_id RENAME TO payee_history;
  CREATE TRIGGER payee_history_under_row_id AFTER INSERT ON payee_history
    WHEN ${historyRowIdSql('NEW.payee')} <> NEW.id
      AND NOT EXISTS (SELECT 1 FROM payee_history WHERE id = ${historyRowIdSql('NEW.payee')})
  BEGIN
    UPDATE payee_history SET id = ${historyRowIdSql('NEW.payee')} WHERE id = NEW.id;
  END;
`;

/**
 * Approval policies per service (docs/approval.md "The policy"): each proposal, the signatures
 * over it, the versions in force (a version number taken once: two proposals replacing the same
 * version cannot both take effect), and signed withdrawals of approvals. Every row is written
 * once and never changed, so `register copy` moves them as they are.
 */
function policyTables(prefix: string, integer: string, text: string, withoutRowid: string): string {
  return `
  CREATE TABLE ${prefix}policy_proposals (
    service ${text} NOT NULL,
    digest ${text} NOT NULL,
    replaces ${integer} NOT NULL,
    policy ${text} NOT NULL,
    proposed_at ${text} NOT NULL,
    PRIMARY KEY (service, replaces, digest)
  )${withoutRowid};
  CREATE TABLE ${prefix}policy_signatures (
    statement_digest ${text} NOT NULL,
    fingerprint ${text} NOT NULL,
    service ${text} NOT NULL,
    digest ${text} NOT NULL,
    replaces ${integer} NOT NULL,
    statement ${text} NOT NULL,
    signature ${text} NOT NULL,
    recorded_at ${text} NOT NULL,
    PRIMARY KEY (statement_digest, fingerprint)
  )${withoutRowid};
  CREATE INDEX policy_signatures_by_proposal ON ${prefix}policy_signatures (service, replaces, digest);
  CREATE TABLE ${prefix}policies (
    service ${text} NOT NULL,
    version ${integer} NOT NULL,
    digest ${text} NOT NULL,
    policy ${text} NOT NULL,
    signed_by ${text} NOT NULL,
    since ${text} NOT NULL,
    PRIMARY KEY (service, version)
  )${withoutRowid};
  CREATE TABLE ${prefix}approval_withdrawals (
    statement_digest ${text} NOT NULL,
    fingerprint ${text} NOT NULL,
    approval_digest ${text} NOT NULL,
    origin ${text} NOT NULL,
    digest ${text} NOT NULL,
    sheet ${text} NOT NULL,
    statement ${text} NOT NULL,
    signature ${text} NOT NULL,
    recorded_at ${text} NOT NULL,
    PRIMARY KEY (statement_digest, fingerprint)
  )${withoutRowid};
  CREATE INDEX approval_withdrawals_by_digest ON ${prefix}approval_withdrawals (digest);
  CREATE INDEX approval_withdrawals_by_sheet ON ${prefix}approval_withdrawals (sheet);
  `;
}

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
  // Leases timed by the store (lease.ts): the process table a run lived in, and when its lease
  // runs out by the wall clock and by the boot clock of the machine that wrote it.
  `
  ALTER TABLE runs ADD COLUMN machine TEXT;
  ALTER TABLE runs ADD COLUMN process_start TEXT;
  ALTER TABLE runs ADD COLUMN lease_expires_at TEXT NOT NULL DEFAULT '1970-01-01T00:00:00.000Z';
  ALTER TABLE runs ADD COLUMN lease_boot TEXT;
  ALTER TABLE runs ADD COLUMN lease_uptime_ms INTEGER;
  UPDATE runs SET lease_expires_at = strftime('%Y-%m-%dT%H:%M:%fZ', heartbeat_at, '+60 seconds');
  `,
  // One integrator under two spellings of the service's URL: what the operator declared.
  `
  CREATE TABLE origins (
    service TEXT NOT NULL,
    integrator_id TEXT NOT NULL,
    same_as TEXT,
    declared_at TEXT NOT NULL,
    PRIMARY KEY (service, integrator_id)
  ) WITHOUT ROWID;
  `,
  // What the approver's warnings compare a payee with: its last payout and largest amounts.
  `
  CREATE TABLE payee_history (
    scope_id INTEGER NOT NULL REFERENCES scopes (id),
    payee TEXT NOT NULL,
    history TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (scope_id, payee)
  ) WITHOUT ROWID;
  `,
  // Who a payout pays (the keyed identity its payee history is filed under, and the name the
  // sheet gave): an outcome learnt later joins the right history, and the next batch can name
  // the payees it no longer pays.
  `
  ALTER TABLE payouts ADD COLUMN payee_key TEXT;
  ALTER TABLE payouts ADD COLUMN payee_name TEXT;
  CREATE INDEX payouts_with_payee_by_run ON payouts (run_id) WHERE payee_key IS NOT NULL;
  `,
  // Signed approvals (docs/approval.md "Signing an approval"), kept for every service whatever
  // the integrator (an approver signs offline, before any run knows it), and the approvals each
  // run relied on.
  `
  CREATE TABLE approvals (
    statement_digest TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    origin TEXT NOT NULL,
    digest TEXT NOT NULL,
    sheet TEXT NOT NULL,
    statement TEXT NOT NULL,
    signature TEXT NOT NULL,
    principals TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (statement_digest, fingerprint)
  ) WITHOUT ROWID;
  CREATE INDEX approvals_by_digest ON approvals (digest);
  CREATE INDEX approvals_by_sheet ON approvals (sheet);
  CREATE TABLE run_approvals (
    scope_id INTEGER NOT NULL REFERENCES scopes (id),
    run_id TEXT NOT NULL,
    principal TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    statement_digest TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    PRIMARY KEY (run_id, principal)
  ) WITHOUT ROWID;
  CREATE INDEX run_approvals_by_scope ON run_approvals (scope_id);
  `,
  // A payee's history is about a kilobyte of JSON. A table WITHOUT ROWID keeps its rows in
  // B-tree cells of at most a quarter page, so each history spilled onto an overflow page of
  // its own: a register of 333,334 payees took 1,490 MB for 350 MB of text, and reading the
  // histories of a million-row sheet took 13 s. An ordinary table keeps four histories a page
  // (435 MB, 2.3 s), found through the primary key's index.
  `
  CREATE TABLE payee_history_rows (
    scope_id INTEGER NOT NULL REFERENCES scopes (id),
    payee TEXT NOT NULL,
    history TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (scope_id, payee)
  );
  INSERT INTO payee_history_rows (scope_id, payee, history, updated_at)
    SELECT scope_id, payee, history, updated_at FROM payee_history;
  DROP TABLE payee_history;
  ALTER TABLE payee_history_rows RENAME TO payee_history;
  `,
  // The approver's warnings of each row sent, as its run judged them: a resumed or re-read
  // batch hashes its paid rows as approved, without reading their payees' histories again.
  `
  ALTER TABLE payouts ADD COLUMN warnings TEXT;
  `,
  HISTORY_PAYDAYS_ONCE,
  HISTORY_ROW_IDS,
  policyTables('', 'INTEGER', 'TEXT', ' WITHOUT ROWID'),
];

/** The version this payouts writes. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The first version whose payee histories sit under their row ids. */
export const HISTORY_ROW_IDS_VERSION = MIGRATIONS.indexOf(HISTORY_ROW_IDS) + 1;

/**
 * The same register in PostgreSQL, in a schema of its own (`payouts`), its version in
 * `payouts.schema_version`. Times the database sets are `timestamptz` (leases are decided by its
 * `now()`); times a client gives (a run's start, an event's) are kept as the ISO text it sent.
 */
export const PG_MIGRATIONS: readonly string[] = [
  `
  CREATE SCHEMA IF NOT EXISTS payouts;
  CREATE TABLE IF NOT EXISTS payouts.schema_version (version integer NOT NULL);
  INSERT INTO payouts.schema_version SELECT 0 WHERE NOT EXISTS (SELECT 1 FROM payouts.schema_version);
  CREATE TABLE payouts.scopes (
    id bigserial PRIMARY KEY,
    service text NOT NULL,
    integrator_id text NOT NULL,
    secret bytea NOT NULL,
    login text,
    created_at timestamptz NOT NULL,
    last_used_at timestamptz NOT NULL,
    UNIQUE (service, integrator_id)
  );
  CREATE TABLE payouts.runs (
    id text PRIMARY KEY,
    scope_id bigint NOT NULL REFERENCES payouts.scopes (id),
    sheet text NOT NULL,
    digest text NOT NULL,
    host text NOT NULL,
    pid integer NOT NULL,
    machine text,
    process_start text,
    started_at text NOT NULL,
    heartbeat_at timestamptz NOT NULL,
    lease_expires_at timestamptz NOT NULL,
    finished_at timestamptz,
    rows integer,
    statuses text,
    exit_code integer
  );
  CREATE INDEX runs_by_scope ON payouts.runs (scope_id, started_at);
  CREATE INDEX runs_open ON payouts.runs (scope_id) WHERE finished_at IS NULL;
  CREATE TABLE payouts.payouts (
    scope_id bigint NOT NULL REFERENCES payouts.scopes (id),
    reference text NOT NULL,
    amount text NOT NULL,
    currency text NOT NULL,
    rail text NOT NULL,
    payee text NOT NULL,
    payee_hint text NOT NULL,
    state text NOT NULL,
    idempotency_key text NOT NULL,
    beneficiary_id text,
    recipient_id text,
    simulation_id text,
    transaction_id text,
    error text,
    run_id text NOT NULL,
    sheet text NOT NULL,
    paid_at timestamptz,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (scope_id, reference)
  );
  CREATE INDEX payouts_by_transaction ON payouts.payouts (transaction_id) WHERE transaction_id IS NOT NULL;
  CREATE INDEX payouts_by_run ON payouts.payouts (run_id);
  CREATE INDEX payouts_by_time ON payouts.payouts (scope_id, updated_at);
  CREATE TABLE payouts.payees (
    scope_id bigint NOT NULL REFERENCES payouts.scopes (id),
    kind text NOT NULL,
    fingerprint text NOT NULL,
    id text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (scope_id, kind, fingerprint)
  );
  CREATE TABLE payouts.events (
    integrator_id text NOT NULL,
    resource_id text NOT NULL,
    operation text NOT NULL,
    success boolean NOT NULL,
    message text,
    occurred_at text NOT NULL,
    received_at text NOT NULL,
    payload text NOT NULL,
    PRIMARY KEY (integrator_id, resource_id, operation)
  );
  CREATE INDEX events_by_resource ON payouts.events (resource_id);
  `,
  `
  CREATE TABLE payouts.origins (
    service text NOT NULL,
    integrator_id text NOT NULL,
    same_as text,
    declared_at timestamptz NOT NULL,
    PRIMARY KEY (service, integrator_id)
  );
  `,
  `
  CREATE TABLE payouts.payee_history (
    scope_id bigint NOT NULL REFERENCES payouts.scopes (id),
    payee text NOT NULL,
    history text NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (scope_id, payee)
  );
  `,
  `
  ALTER TABLE payouts.payouts ADD COLUMN payee_key text;
  ALTER TABLE payouts.payouts ADD COLUMN payee_name text;
  CREATE INDEX payouts_with_payee_by_run ON payouts.payouts (run_id) WHERE payee_key IS NOT NULL;
  `,
  `
  CREATE TABLE payouts.approvals (
    statement_digest text NOT NULL,
    fingerprint text NOT NULL,
    origin text NOT NULL,
    digest text NOT NULL,
    sheet text NOT NULL,
    statement text NOT NULL,
    signature text NOT NULL,
    principals text NOT NULL,
    recorded_at text NOT NULL,
    PRIMARY KEY (statement_digest, fingerprint)
  );
  CREATE INDEX approvals_by_digest ON payouts.approvals (digest);
  CREATE INDEX approvals_by_sheet ON payouts.approvals (sheet);
  CREATE TABLE payouts.run_approvals (
    scope_id bigint NOT NULL REFERENCES payouts.scopes (id),
    run_id text NOT NULL,
    principal text NOT NULL,
    fingerprint text NOT NULL,
    statement_digest text NOT NULL,
    recorded_at text NOT NULL,
    PRIMARY KEY (run_id, principal)
  );
  CREATE INDEX run_approvals_by_scope ON payouts.run_approvals (scope_id);
  `,
  // A batch's payouts are read run by run in reference order (the comparison with the previous
  // batch): an index by run alone made each page sort what was left of the run. SQLite's index
  // by run holds the primary key after it, so it reads them in that order already.
  `
  CREATE INDEX payouts_with_payee_by_run_reference ON payouts.payouts (run_id, reference) WHERE payee_key IS NOT NULL;
  DROP INDEX payouts.payouts_with_payee_by_run;
  `,
  `
  ALTER TABLE payouts.payouts ADD COLUMN warnings text;
  `,
  HISTORY_PAYDAYS_ONCE,
  policyTables('payouts.', 'integer', 'text', ''),
];

/** The version of the PostgreSQL schema this payouts writes. */
export const PG_SCHEMA_VERSION = PG_MIGRATIONS.length;

/** Refuses a register of a schema newer than the one this payouts knows (`known`), either store's. */
export function refuseNewer(location: string, version: number, known: number): void {
  if (version > known)
    throw new RegisterError(
      `the register ${location} was written by a newer payouts (schema version ${version}, this payouts knows ${known}): upgrade payouts to use it`,
      { path: location },
    );
}

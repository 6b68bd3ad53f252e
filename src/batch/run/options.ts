/** What `payouts run` is asked to do: the sheet, the service, the register, the guards, the pace. */
import type { Logger } from 'pino';
import type { PayoutsClient } from '../../api/client.js';
import type { Clock } from '../../clock.js';
import type { RegisterSource } from '../../register/location.js';
import type { OriginDeclaration } from '../../register/types.js';
import type { ControlTotals } from '../guards.js';
import type { SheetOptions } from '../prepare.js';
import type { Connection } from '../service-scope.js';

export interface RunOptions extends SheetOptions {
  connection: Connection;
  outPath?: string;
  /** Where the register lives (README `--register`): a file path or a PostgreSQL URL. */
  register: string;
  /** `--compare-with SHEET|DIGEST`: the earlier batch `sincePrevious` compares with. */
  compareWith?: string;
  /** Where that location came from, said when there is no register there. */
  registerFrom?: RegisterSource;
  controls?: ControlTotals;
  /** `--approve DIGEST`: refuse unless the batch digest matches. */
  approve?: string;
  /**
   * `--require-approvals N --allowed-signers FILE --approval-max-age DAYS`: refuse unless N
   * approvers signed this sheet's current statement (docs/approval.md "What counts"). Without
   * the file, the register's approval policy names the signers (or the run is refused, exit 2).
   */
  approvals?: { required: number; allowedSigners?: string; maxAgeDays: number };
  /** `run --sandbox`: a rehearsal, whose default results file is `<sheet>.sandbox.results.<ext>`. */
  rehearsal?: boolean;
  /** `--same-service-as ORIGIN` or `--separate-service`: what the service this run reaches is. */
  origin?: OriginDeclaration;
  /** `--retry-unknown`: re-send rows whose outcome is unknown, with the same key. */
  retryUnknown?: boolean;
  /** `--hold-changed-payees`: rows whose payee's bank details changed are not sent (`skipped`). */
  holdChangedPayees?: boolean;
  /** Keep every warned reference (`--json` lists them all); else counts and the first rows. */
  warnedReferences?: boolean;
  concurrency: number;
  /** Requests per second, all endpoints together; unlimited when omitted. */
  rate?: number;
  /** After sending, check transaction statuses for up to this many seconds (0: don't). */
  waitSeconds?: number;
  /** Webhook events recorded by `payouts webhooks listen --events FILE`: confirm outcomes. */
  eventsFile?: string;
  logger: Logger;
  /** Aborted on SIGINT/SIGTERM/SIGHUP: stop taking rows, finish those under way, write results. */
  signal?: AbortSignal;
  /** Aborted by a second signal: cut the requests under way now, without the grace. */
  abandonSignal?: AbortSignal;
  /** `--max-outage S`: how long an outage of the service is waited through (breaker.ts). */
  maxOutageSeconds?: number;
  /** Progress as rows finish: done of total valid rows. */
  onProgress?: (done: number, total: number) => void;
  /** Replaces the client (tests); by default one is built from `connection`. */
  client?: PayoutsClient;
  /** Time (tests drive a whole run with a fake clock); the wall clock by default. */
  clock?: Clock;
  /**
   * The exit code of a run that ended so, kept in the run's record (`status` shows it). Exit
   * codes are the command line's to decide; without this the record has none.
   */
  exitCodeOf?: (ending: RunEnding) => number;
}

/** How a run ended, as far as its exit code is concerned. */
export interface RunEnding {
  /** Whether any request that may move money left. */
  sent: boolean;
  interrupted: boolean;
  /** The service or the register stayed unavailable past --max-outage, or scratch space failed. */
  unavailable: boolean;
  /** Every row valid, submitted, completed or skipped. */
  rowsOk: boolean;
}

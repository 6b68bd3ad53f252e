/**
 * `payouts status [reference...]`: what the register knows (PRODUCT.md), as a table for
 * people, or `--json` / `--csv` for scripts. Exit 1 when a reference asked for is not there.
 */
import { stringify } from 'csv-stringify/sync';
import { EXIT } from '../errors.js';
import type { ScopeHint } from '../register/choose.js';
import { type ReferenceStatus, type RunStatus, registerStatus } from '../register/status.js';
import { type CliIo, println } from './io.js';

export interface StatusCommandOptions extends ScopeHint {
  register: string;
  references: string[];
  limit: number;
  format: 'text' | 'json' | 'csv';
}

const REFERENCE_COLUMNS = [
  'reference',
  'state',
  'amount',
  'currency',
  'rail',
  'payee',
  'transactionId',
  'when',
  'sheet',
  'error',
  'service',
  'integratorId',
] as const satisfies readonly (keyof ReferenceStatus)[];

const RUN_COLUMNS = [
  'startedAt',
  'state',
  'sheet',
  'rows',
  'statuses',
  'exitCode',
  'finishedAt',
  'digest',
  'runId',
  'host',
  'pid',
  'service',
  'integratorId',
] as const satisfies readonly (keyof RunStatus)[];

export async function statusCommand(options: StatusCommandOptions, io: CliIo): Promise<number> {
  const report = await registerStatus(options);
  if (report.note) println(io.stderr, `payouts: ${report.note}`);
  const rows = (report.kind === 'references' ? report.references : report.runs) as unknown as Record<
    string,
    unknown
  >[];
  const columns: readonly string[] = report.kind === 'references' ? REFERENCE_COLUMNS : RUN_COLUMNS;
  if (options.format === 'json') {
    io.stdout.write(`${JSON.stringify({ register: report.register, [report.kind]: rows })}\n`);
  } else if (options.format === 'csv') {
    io.stdout.write(stringify([columns, ...rows.map((row) => columns.map((c) => cellText(row[c])))]));
  } else {
    printTable(io, report.kind, rows, report.register);
  }
  const missing = report.kind === 'references' && report.references.some((r) => r.state === 'not-found');
  return missing ? EXIT.rowsNotOk : EXIT.ok;
}

function cellText(value: unknown): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'object') {
    return Object.entries(value as Record<string, number>)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  }
  return String(value);
}

function printTable(
  io: CliIo,
  kind: 'references' | 'runs',
  rows: Record<string, unknown>[],
  path: string,
): void {
  println(io.stdout, `Register: ${path}`);
  if (rows.length === 0) {
    println(io.stdout, kind === 'runs' ? 'No runs recorded yet.' : 'No such references.');
    return;
  }
  for (const row of rows) {
    if (kind === 'references') {
      const r = row as unknown as ReferenceStatus;
      if (r.state === 'not-found') {
        println(io.stdout, `${r.reference}: not in the register (never sent by payouts with this register)`);
        continue;
      }
      const tx = r.transactionId ? ` transaction ${r.transactionId}` : '';
      println(
        io.stdout,
        `${r.reference}: ${r.state}, ${r.currency} ${r.amount} by ${r.rail} to ${r.payee},${tx} on ${r.when} from ${r.sheet}${r.error ? ` (${r.error})` : ''}`,
      );
    } else {
      const r = row as unknown as RunStatus;
      const counts = r.statuses ? ` ${cellText(r.statuses)}` : '';
      println(
        io.stdout,
        `${r.startedAt} ${r.state.padEnd(8)} ${r.sheet}: ${r.rows ?? '?'} rows${counts}${r.exitCode === undefined ? '' : `, exit ${r.exitCode}`} (run ${r.runId}, ${r.service})`,
      );
    }
  }
}

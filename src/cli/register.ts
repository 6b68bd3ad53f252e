/**
 * `payouts register copy --from A --to B` (PRODUCT.md): copies a register (SQLite path or
 * PostgreSQL URL) into another, idempotently, refusing conflicting records. Prints what it
 * copied, per kind of record, and every conflict; exit 0 without conflicts, 1 with some.
 */
import { UsageError } from '../errors.js';
import { copyRegister } from '../register/copy.js';
import { shownLocation } from '../register/location.js';
import { openExistingRegister, openRegister } from '../register/open.js';
import type { CliIo } from './io.js';

export interface RegisterCopyOptions {
  /** Location texts: file paths or PostgreSQL URLs. */
  from: string;
  to: string;
  json: boolean;
}

export async function registerCopyCommand(options: RegisterCopyOptions, io: CliIo): Promise<number> {
  const [from, to] = [shownLocation(options.from), shownLocation(options.to)];
  if (from === to) throw new UsageError(`--from and --to name the same register (${from})`);
  const source = await openExistingRegister(options.from);
  if (source === undefined) throw new UsageError(`there is no register at ${from} to copy`);
  try {
    const target = await openRegister(options.to, { warn: (m) => io.stderr.write(`warning: ${m}\n`) });
    try {
      const report = await copyRegister(source, target);
      if (options.json) {
        io.stdout.write(`${JSON.stringify({ from, to, ...report })}\n`);
      } else {
        const kinds = ['origin', 'scope', 'run', 'payout', 'payee', 'history', 'event'] as const;
        const label = (kind: (typeof kinds)[number]) => (kind === 'history' ? 'histories' : `${kind}s`);
        io.stdout.write(`Copied ${from} into ${to}\n`);
        for (const kind of kinds) {
          io.stdout.write(
            `  ${label(kind).padEnd(9)} ${String(report.added[kind]).padStart(8)} added ${String(report.same[kind]).padStart(8)} already there\n`,
          );
        }
        if (report.conflicts.length > 0) {
          io.stdout.write(
            `${report.conflicts.length} conflicting records were not copied (the target keeps its own):\n`,
          );
          for (const conflict of report.conflicts) io.stdout.write(`  ${conflict}\n`);
        }
      }
      return report.conflicts.length > 0 ? 1 : 0;
    } finally {
      await target.close();
    }
  } finally {
    await source.close();
  }
}

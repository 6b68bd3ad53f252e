/**
 * node-postgres reads a pgpass file (PGPASSFILE, ~/.pgpass) through the `pgpass` package when the
 * URL has no password, and that package writes its complaints (a password file others can read,
 * which it then ignores) straight to stderr as text, where a JSON log stream has only records.
 * Its complaints are made process warnings instead, which the command line logs like any other
 * (src/cli/process-warnings.ts). The package offers `warnTo(stream)` for exactly this.
 */
import { createRequire } from 'node:module';
import { Writable } from 'node:stream';

interface PgpassHelper {
  warnTo?: (stream: NodeJS.WritableStream) => unknown;
}

/** Sends the pgpass reader's complaints to `process.emitWarning`; once is enough. */
export function pgpassWarningsAsProcessWarnings(): void {
  let helper: PgpassHelper;
  try {
    // The copy node-postgres itself loads: resolved from pg's folder, not ours.
    const fromPg = createRequire(createRequire(import.meta.url).resolve('pg'));
    helper = fromPg('pgpass/lib/helper') as PgpassHelper;
  } catch {
    return; // a node-postgres without pgpass: nothing of it can print
  }
  helper.warnTo?.(
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        const text = chunk
          .toString('utf8')
          .trim()
          .replace(/^WARNING:\s*/, '');
        if (text !== '') process.emitWarning(text, 'PasswordFileWarning');
        callback();
      },
    }),
  );
}

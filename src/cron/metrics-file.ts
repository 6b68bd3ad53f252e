/**
 * `--metrics-file PATH`: the metrics written for node_exporter's textfile collector, which may
 * read the file at any moment: a temporary file in the same folder (a name the collector skips,
 * not ending in `.prom`) is renamed over it, so it is always whole. A failed run keeps the last
 * success the file held.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type CronCommand, LAST_SUCCESS } from './metrics.js';

/** The last success a metrics file holds for `command`, as its text; undefined when none. */
export async function lastSuccessIn(file: string, command: CronCommand): Promise<string | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  return lastSuccessOf(text, command);
}

/** The last success of `command` in a metrics text, if it holds a number there. */
export function lastSuccessOf(text: string, command: CronCommand): string | undefined {
  const line = new RegExp(`^${LAST_SUCCESS}\\{command="${command}"\\} (\\S+)$`, 'm').exec(text);
  const value = line?.[1];
  return value !== undefined && /^\d+(\.\d+)?$/.test(value) ? value : undefined;
}

/** Writes `text` to `file` whole or not at all: a temporary file beside it, renamed over it. */
export async function writeAtomically(file: string, text: string): Promise<void> {
  const temporary = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`,
  );
  try {
    await writeFile(temporary, text, { mode: 0o644 });
    await rename(temporary, file);
  } catch (error) {
    await rm(temporary, { force: true }).catch(() => {});
    throw error;
  }
}

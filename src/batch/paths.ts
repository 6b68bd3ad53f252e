import path from 'node:path';
import type { SheetFormat } from '../sheet/types.js';

/** `<sheet dir>/<sheet name>` without the extension, the stem of every derived file. */
function stemOf(sheetPath: string): string {
  const parsed = path.parse(sheetPath);
  return path.join(parsed.dir, parsed.name);
}

/**
 * PRODUCT.md default `--out`: `<sheet dir>/<sheet name>.results.<same extension>`; a rehearsal
 * (`run --sandbox`) writes `<sheet name>.sandbox.results.<ext>`, never over a real run's.
 */
export function resultsPathFor(sheetPath: string, format: SheetFormat, rehearsal = false): string {
  return `${stemOf(sheetPath)}${rehearsal ? '.sandbox' : ''}.results.${format}`;
}

import path from 'node:path';
import type { SheetFormat } from '../sheet/types.js';

/** `<sheet dir>/<sheet name>` without the extension, the stem of every derived file. */
function stemOf(sheetPath: string): string {
  const parsed = path.parse(sheetPath);
  return path.join(parsed.dir, parsed.name);
}

/** PRODUCT.md default `--out`: `<sheet dir>/<sheet name>.results.<same extension>`. */
export function resultsPathFor(sheetPath: string, format: SheetFormat): string {
  return `${stemOf(sheetPath)}.results.${format}`;
}

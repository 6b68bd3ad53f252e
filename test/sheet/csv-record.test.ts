/**
 * The results file's CSV records (sheet/csv-record.ts) are what csv-stringify wrote with the
 * options the results file gave it: compared cell by cell on awkward texts, for every delimiter.
 */
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { CsvRecordEncoder } from '../../src/sheet/csv-record.js';

const AWKWARD = [
  '',
  'plain',
  ' spaced ',
  'a,b',
  'a;b',
  'a\tb',
  'a|b',
  'say "hi"',
  '"',
  '""',
  'line\nbreak',
  'bare\rreturn',
  'crlf\r\nend',
  '=1+2',
  "'quoted'",
  'José Pérez-Ruiz',
  '中文,逗号',
  'emoji 😀 here',
  'trailing\n',
  '\n',
  ',',
  'a"b,c\nd',
];

describe('CsvRecordEncoder', () => {
  for (const delimiter of [',', ';', '\t', '|']) {
    it(`writes what csv-stringify writes, delimiter ${JSON.stringify(delimiter)}`, () => {
      const encoder = new CsvRecordEncoder(delimiter);
      const library = (cells: string[]) =>
        stringify([cells], { delimiter, record_delimiter: '\n', quote_record_delimiter: true });
      for (const cell of AWKWARD) expect(encoder.record([cell])).toBe(library([cell]));
      expect(encoder.record(AWKWARD)).toBe(library(AWKWARD));
      // Each awkward text beside each other, in pairs.
      for (const a of AWKWARD) for (const b of AWKWARD) expect(encoder.record([a, b])).toBe(library([a, b]));
    });
  }

  it('quotes only what needs it', () => {
    expect(new CsvRecordEncoder(',').record(['1', 'a,b', 'say "hi"', 'x\ny', ''])).toBe(
      '1,"a,b","say ""hi""","x\ny",\n',
    );
  });
});

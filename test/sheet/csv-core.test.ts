/**
 * csv-parse's parser core as sheet/csv-core.ts uses it (not a documented API): these tests fail
 * when a csv-parse release changes what the CSV reader relies on.
 */
import { CsvError, Parser } from 'csv-parse';
import { describe, expect, it } from 'vitest';
import { csvCore, LINE_ENDINGS } from '../../src/sheet/csv-core.js';

/** Feeds `chunks` then the end; the records pushed after each call and the errors returned. */
function feed(chunks: string[], options = {}) {
  const core = csvCore({ relax_column_count: true, skip_empty_lines: false, ...options });
  const steps: Array<{ records: string[][]; error: CsvError | undefined }> = [];
  let records: string[][] = [];
  const push = (record: string[]) => records.push(record);
  for (const chunk of [...chunks, undefined]) {
    const error = core.parse(
      chunk === undefined ? undefined : Buffer.from(chunk),
      chunk === undefined,
      push,
      () => {},
    );
    steps.push({ records, error });
    records = [];
  }
  return steps;
}

describe('csv-parse parser core (sheet/csv-core.ts)', () => {
  it('takes chunks cut anywhere, even inside a quoted cell, and pushes a record once the next begins or the input ends', () => {
    const steps = feed(['a,b\n1,"x', ',y"\n2,', 'z\n3,last']);
    expect(steps.map((s) => s.records)).toEqual([
      [['a', 'b']],
      [],
      [
        ['1', 'x,y'],
        ['2', 'z'],
      ],
      [['3', 'last']],
    ]);
    expect(steps.every((s) => s.error === undefined)).toBe(true);
  });

  it('returns an error instead of throwing, with its code and line', () => {
    const steps = feed(['a,b\n1,"open\n2,x\n']);
    const last = steps.at(-1)!;
    expect(last.error).toBeInstanceOf(CsvError);
    expect(last.error?.code).toBe('CSV_QUOTE_NOT_CLOSED');
    expect((last.error as CsvError & { lines?: number }).lines).toBe(3);
  });

  it('keeps blank lines as records and honours the options the reader passes', () => {
    // relax_quotes: a quote that does not open a cell, or ends one early, is kept as text.
    const steps = feed(['a;b\r\n\r\n1;"2"x;3"4\r\n'], {
      delimiter: ';',
      relax_quotes: true,
      record_delimiter: '\r\n',
    });
    expect(steps.flatMap((s) => s.records)).toEqual([['a', 'b'], [''], ['1', '"2"x', '3"4']]);
  });

  describe('every line ending ends a record (LINE_ENDINGS, as the reader passes them)', () => {
    // Mixed endings, a blank line, quoted CR, LF and CRLF, a quoted cell closed at a line end,
    // and a CR at the very end of the input.
    const text = 'a,b\r\n1,2\n\r"3\r",x\r\n"4\n4","\r\n"\r5,"5"\n6,6\r';
    const expected = [['a', 'b'], ['1', '2'], [''], ['3\r', 'x'], ['4\n4', '\r\n'], ['5', '5'], ['6', '6']];

    it('reads the same records wherever the input is cut in two chunks, CRLF always as one ending', () => {
      for (let cut = 0; cut <= text.length; cut++) {
        const steps = feed([text.slice(0, cut), text.slice(cut)], { record_delimiter: LINE_ENDINGS });
        expect(
          steps.flatMap((s) => s.records),
          `cut at ${cut}`,
        ).toEqual(expected);
        expect(steps.every((s) => s.error === undefined)).toBe(true);
      }
    });

    it("reads what csv-parse's own test of the list reads: the reader's quicker test is only a speed-up", () => {
      // A copy of the list is not LINE_ENDINGS itself, so csv-parse tests it its own way.
      const own = feed([text], { record_delimiter: [...LINE_ENDINGS] });
      expect(own.flatMap((s) => s.records)).toEqual(expected);
    });

    it("replaces the core's record delimiter test, which csv-parse still has under its name", () => {
      const name = '__isRecordDelimiter';
      const stock = (new Parser({}) as unknown as { api: Record<string, unknown> }).api[name];
      expect(typeof stock).toBe('function');
      const core = csvCore({ record_delimiter: LINE_ENDINGS as string[] }) as unknown as Record<
        string,
        unknown
      >;
      expect(typeof core[name]).toBe('function');
      // Each core has its own copy of csv-parse's methods: compare their code.
      expect(String(core[name])).not.toBe(String(stock));
      const other = csvCore({ record_delimiter: [...LINE_ENDINGS] }) as unknown as Record<string, unknown>;
      expect(String(other[name])).toBe(String(stock));
    });
  });

  it('refuses a record longer than max_record_size', () => {
    const steps = feed([`a\n${'x'.repeat(100)}\n`], { max_record_size: 50 });
    expect(steps.find((s) => s.error)?.error?.code).toBe('CSV_MAX_RECORD_SIZE');
  });
});

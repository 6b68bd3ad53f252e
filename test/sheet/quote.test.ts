import { describe, expect, it } from 'vitest';
import { quoteCell } from '../../src/sheet/quote.js';

describe('quoteCell', () => {
  it.each([
    ['short text', 'Amount', '"Amount"'],
    ['a line break', 'Routing\nNumber', '"Routing\\nNumber"'],
    ['CR LF and tab', 'a\r\nb\tc', '"a\\r\\nb\\tc"'],
    ['another control character', 'a\u001bb', '"a\\u001bb"'],
    ['"; " would split the results file', 'a; b', '"a;\u00a0b"'],
    ['a semicolon without a space stays', 'a;b ;c;', '"a;b ;c;"'],
    ['a line separator', 'a\u2028b\u007f', '"a\\u2028b\\u007f"'],
    ['exactly 81 characters are kept', 'x'.repeat(81), `"${'x'.repeat(81)}"`],
    ['longer is cut to 80 with an ellipsis', 'y'.repeat(3_000_000), `"${'y'.repeat(80)}…"`],
  ])('%s', (_label, text, expected) => {
    expect(quoteCell(text)).toBe(expected);
  });
});

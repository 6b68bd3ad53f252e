import { describe, expect, it } from 'vitest';
import { identifierDamage } from '../../src/rows/damage.js';
import type { Cell } from '../../src/sheet/types.js';

const text = (t: string): Cell => ({ text: t, kind: 'string' });
const number = (t: string): Cell => ({ text: t, kind: 'number' });

describe('identifierDamage', () => {
  it.each([
    text('021000021'),
    text('032180000118359719'),
    text('12E45'),
    text('1.5e3'),
    text('GB82WEST12345698765432'),
  ])('sees no damage in the text %j', (cell) => {
    expect(identifierDamage('accountNumber', cell)).toBeUndefined();
  });

  it.each(['2.1E+08', '1.23457e+17', '1E+21', '-4.5e-7'])(
    'sees scientific notation in %j, text or number',
    (t) => {
      const message = `clabe arrived in scientific notation (${t}): a spreadsheet rounded the number and its digits are lost. Format the clabe column as Text, re-enter the full value and save again.`;
      expect(identifierDamage('clabe', text(t))).toBe(message);
      expect(identifierDamage('clabe', number(t))).toBe(message);
    },
  );

  it('a number of 15 significant digits lost its zeros; one of 16 or more also its last digits', () => {
    expect(identifierDamage('clabe', number('201007777777777'))).toBe(
      'clabe arrived as a number (201007777777777): a spreadsheet dropped its leading zeros or digits. Format the clabe column as Text, re-enter the value and save again.',
    );
    expect(identifierDamage('clabe', number('2010077777777770'))).toBe(
      'clabe arrived as a number (2010077777777770): a spreadsheet dropped its leading zeros or digits. Format the clabe column as Text, re-enter the value and save again.',
    );
    expect(identifierDamage('clabe', number('2010077777777771'))).toBe(
      'clabe arrived as a number with more than 15 digits (2010077777777771): a spreadsheet keeps only 15 digits and replaced the rest. Format the clabe column as Text, re-enter the full value and save again.',
    );
  });
});

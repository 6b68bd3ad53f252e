import { describe, expect, it } from 'vitest';
import { normaliseText } from '../../src/rows/text.js';

describe('normaliseText', () => {
  it.each([
    ['plain ASCII is only trimmed', '  Ana Lopez ', 'Ana Lopez'],
    ['no-break space becomes a space', 'Ana\u00a0Lopez', 'Ana Lopez'],
    ['narrow no-break and figure spaces', 'Ana\u202fde\u2007Lopez', 'Ana de Lopez'],
    ['ideographic space', 'Ana\u3000Lopez', 'Ana Lopez'],
    ['zero-width space removed', 'Ana\u200bLopez', 'AnaLopez'],
    ['zero-width joiner and BOM removed', '\ufeffAna\u200dLopez', 'AnaLopez'],
    ['soft hyphen removed', 'Ló\u00adpez', 'López'],
    ['NFD composed to NFC', 'Jose\u0301', 'Jos\u00e9'],
    ['trailing no-break space trimmed', 'Acme Ltd\u00a0', 'Acme Ltd'],
    ['tab inside becomes a space', 'Acme\tLtd', 'Acme Ltd'],
    ['inner double spaces are kept', 'Acme  Ltd', 'Acme  Ltd'],
    ['empty stays empty', '\u00a0\u200b', ''],
  ])('%s', (_label, input, expected) => {
    expect(normaliseText(input)).toBe(expected);
  });
});

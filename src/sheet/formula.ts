/**
 * A cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, CR first, or the
 * full-width forms Apple Numbers turns into them) gets a leading `'` (docs/sheets.md "The results
 * file", OWASP "CSV Injection"); plain numbers such
 * as `-12.50` stay as they are.
 */
export function neutraliseFormula(text: string): string {
  const first = text.charCodeAt(0);
  // Most cells start with a letter or digit: settle those without the set.
  if ((first > 64 && first < 0xff0b) || (first > 45 && first < 61)) return text;
  // A text that already looks neutralised (`'=x`, typed so) gets one more mark, so that
  // restoreFormula gives back exactly what was typed.
  if (first === 39 /* ' */) return neutraliseFormula(text.slice(1)) === text.slice(1) ? text : `'${text}`;
  if (!FORMULA_STARTS.has(first)) return text;
  if ((first === 43 || first === 45) && PLAIN_NUMBER.test(text)) return text;
  return `'${text}`;
}

/**
 * Undoes neutraliseFormula on a cell of a results file fed back (docs/sheets.md "The results
 * file": the mark is removed again): the service receives exactly what the user had typed.
 */
export function restoreFormula(text: string): string {
  if (text.charCodeAt(0) !== 39 /* ' */) return text;
  const original = text.slice(1);
  return neutraliseFormula(original) === text ? original : text;
}

// = + - @ TAB CR, and full-width ＝ ＋ － ＠.
const FORMULA_STARTS: ReadonlySet<number> = new Set([61, 43, 45, 64, 9, 13, 0xff1d, 0xff0b, 0xff0d, 0xff20]);
const PLAIN_NUMBER = /^[+-](?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * How messages show a cell or a header (a header with a line break made an error span
 * several lines; a 3 MB header cell was echoed whole to stderr). One line, at most ~80
 * characters, in double quotes.
 */

/** Characters of a cell a message shows before the ellipsis. */
export const QUOTED_CHARS = 80;

// Line breaks and other control characters would break the one-line rule of messages.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f\u2028\u2029]/g;

/**
 * A cell's text for a message: control characters shown as `\n`, `\t` or `\u001b`, cut to
 * QUOTED_CHARS with an ellipsis, in double quotes. `; ` becomes `;` and a no-break space,
 * because the results file joins messages with `; ` (docs/sheets.md "The results file").
 */
export function quoteCell(text: string, max = QUOTED_CHARS): string {
  return `"${boundCell(text, max)}"`;
}

/** quoteCell without the quotes, for messages that show a value in brackets. */
export function boundCell(text: string, max = QUOTED_CHARS): string {
  // Cut first: a 3 MB cell is never copied whole.
  const cut = text.length > max + 1 ? `${text.slice(0, max)}…` : text;
  // Most cells have neither: one pass over their characters, no new text (a payee's name, each row).
  if (plain(cut)) return cut;
  return cut.replace(CONTROL, escapeControl).replaceAll('; ', ';\u00a0');
}

/** Whether a text has no control character and no `; `: boundCell leaves it as it is. */
function plain(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f || code === 0x2028 || code === 0x2029) return false;
    if (code === 0x3b && text.charCodeAt(i + 1) === 0x20) return false;
  }
  return true;
}

function escapeControl(ch: string): string {
  if (ch === '\n') return '\\n';
  if (ch === '\r') return '\\r';
  if (ch === '\t') return '\\t';
  return `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

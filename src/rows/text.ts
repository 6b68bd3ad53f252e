/**
 * Text as a payout request carries it (issue 8: a name with a non-breaking space and the same
 * name with a plain one are one payee). One pass, before mapping: Unicode NFC, every Unicode
 * space to a plain space, zero-width characters removed, then trimmed. The results file keeps
 * what the user typed; only requests and dedupe keys see this form.
 */

// Everything that is not plain printable ASCII: most cells have none and skip the slow path.
const NOT_PLAIN_ASCII = /[^\x20-\x7e]/;
// Unicode spaces (Zs other than U+0020), tab, and line and paragraph separators.
const UNICODE_SPACES = /[\t\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/g;
// Zero-width space, non-joiner, joiner, word joiner, byte order mark, soft hyphen.
const ZERO_WIDTH = /[\u200b-\u200d\u2060\ufeff\u00ad]/g;

/** The normalised form of a cell's text: NFC, plain spaces, no zero-width characters, trimmed. */
export function normaliseText(text: string): string {
  if (!NOT_PLAIN_ASCII.test(text)) return text.trim();
  return text.normalize('NFC').replace(ZERO_WIDTH, '').replace(UNICODE_SPACES, ' ').trim();
}

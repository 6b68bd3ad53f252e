/**
 * Text as a payout request carries it (a name with a non-breaking space and the same
 * name with a plain one are one payee). One pass, before mapping: Unicode NFC, every Unicode
 * space to a plain space, zero-width characters removed, then trimmed. The results file keeps
 * what the user typed; only requests and dedupe keys see this form.
 */

// Unicode spaces (Zs other than U+0020), tab, and line and paragraph separators.
const UNICODE_SPACES = /[\t\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/g;
// Zero-width space, non-joiner, joiner, word joiner, byte order mark, soft hyphen.
const ZERO_WIDTH = /[\u200b-\u200d\u2060\ufeff\u00ad]/g;

/** The normalised form of a cell's text: NFC, plain spaces, no zero-width characters, trimmed. */
export function normaliseText(text: string): string {
  // Most cells are plain printable ASCII: a loop over short text beats a regular expression call.
  let plain = true;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code > 0x7e) {
      plain = false;
      break;
    }
  }
  if (plain) return text.trim();
  return text.normalize('NFC').replace(ZERO_WIDTH, '').replace(UNICODE_SPACES, ' ').trim();
}

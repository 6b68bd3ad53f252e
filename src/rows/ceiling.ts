/**
 * The hard ceiling on one payout's amount (99999999999999999999.99 was accepted and
 * paid). One ceiling for every currency, far above any real payout and below the point where
 * an amount stops being exact in a double:
 * - a service, JSON parser, spreadsheet or ledger that reads the amount as a number keeps its
 *   cents exact only below 2^53 minor units (90 trillion units of the currency); the ceiling is some
 *   ninety times under that;
 * - of the rails' currencies (USD, MXN, BRL, COP) COP has the most units to the dollar (some
 *   4,000), so the ceiling is still about USD 250 million there: no single payout reaches it.
 * Per-currency limits that fit a business are the operator's `--max-amount` (src/batch/guards.ts).
 */

/** 1,000,000,000,000.00 in minor units: the largest amount one row may pay, in any currency. */
export const AMOUNT_CEILING_MINOR = 100_000_000_000_000n;
/** AMOUNT_CEILING_MINOR as people read it (the table test checks that the two agree). */
export const AMOUNT_CEILING_TEXT = '1,000,000,000,000.00';

/** The row's message when its amount is above the ceiling; undefined when it is not. */
export function amountCeilingProblem(minor: bigint, cellText: string): string | undefined {
  if (minor <= AMOUNT_CEILING_MINOR) return undefined;
  const shown = cellText.length > 80 ? `${cellText.slice(0, 80)}…` : cellText;
  return `amount "${shown}" is above ${AMOUNT_CEILING_TEXT}, more than any real payout (a pasted account number?): fix the amount cell, or split the payout`;
}

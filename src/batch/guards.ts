import { GuardError, UsageError } from '../errors.js';
import { parseSheetAmount } from '../rows/money.js';
import { type BatchSummary, formatAmountForPeople } from './summary.js';

/**
 * Batch guards (README "Options"): `--expect-count N`, `--expect-total CUR=AMOUNT` (repeatable),
 * and `--max-amount CUR=AMOUNT` (repeatable): no single payout above the limit.
 */
export interface ControlTotals {
  expectCount?: number;
  expectTotals: Map<string, bigint>;
  /** Per currency, the largest amount one row may pay (minor units); absent: no limit. */
  maxAmounts?: Map<string, bigint>;
}

/** Parses `--expect-total` values such as `USD=1234.50` or `USD=1,234.50`; a malformed one is a usage error. */
export function parseExpectTotals(values: readonly string[]): Map<string, bigint> {
  return parseCurrencyAmounts('--expect-total', values, 'USD=1234.50');
}

/** Parses `--max-amount` values such as `USD=25000.00`; a malformed one is a usage error. */
export function parseMaxAmounts(values: readonly string[]): Map<string, bigint> {
  return parseCurrencyAmounts('--max-amount', values, 'USD=25000.00');
}

/** `CUR=AMOUNT` values of a repeatable flag, by upper-case currency, in minor units. */
function parseCurrencyAmounts(flag: string, values: readonly string[], example: string): Map<string, bigint> {
  const amounts = new Map<string, bigint>();
  for (const value of values) {
    const match = /^\s*([A-Za-z]{3})\s*=\s*(.+)$/.exec(value);
    // Read as a sheet's amount is: digit grouping where it is certain (USD=36,957.34).
    const amount = match ? parseSheetAmount(match[2]!, { decimalComma: false }) : undefined;
    if (!match || !amount?.ok) {
      // The amount's own reason where there is one: an ambiguous "1,250" shows both readings.
      const why = amount && !amount.ok ? ` - ${amount.message}` : '';
      throw new UsageError(
        `${flag} "${quoted(value)}" is not CUR=AMOUNT with a 3-letter currency and a decimal amount, e.g. ${flag} ${example}${why}`,
      );
    }
    const currency = match[1]!.toUpperCase();
    if (amounts.has(currency)) throw new UsageError(`${flag} names ${currency} twice`);
    amounts.set(currency, amount.minor);
  }
  return amounts;
}

/** A flag value as quoted in a message: at most 80 characters, then an ellipsis. */
function quoted(value: string): string {
  return value.length > 80 ? `${value.slice(0, 80)}…` : value;
}

/**
 * Checks the sheet against its control totals and amount limits. The count is of every data
 * row; the totals are of every row's amount per currency (valid or not), so they describe the
 * file as the finance team prepared it; a currency without --expect-total is not checked. The
 * limits apply to the rows that would be sent (valid ones). Throws a GuardError (exit 4)
 * listing every mismatch.
 */
export function checkControlTotals(summary: BatchSummary, expected: ControlTotals): void {
  const totals: string[] = [];
  if (expected.expectCount !== undefined && expected.expectCount !== summary.rows) {
    totals.push(
      `--expect-count ${expected.expectCount} but the sheet has ${summary.rows} row${summary.rows === 1 ? '' : 's'}`,
    );
  }
  for (const [currency, minor] of expected.expectTotals) {
    const actual = summary.sheetTotals.get(currency) ?? 0n;
    if (actual !== minor) {
      totals.push(
        `--expect-total ${currency}=${formatAmountForPeople(minor)} but the sheet's ${currency} amounts add up to ${formatAmountForPeople(actual)}`,
      );
    }
  }
  const limits: string[] = [];
  for (const [currency, limit] of expected.maxAmounts ?? []) {
    const largest = summary.largestValid.get(currency);
    if (largest !== undefined && largest.minor > limit) {
      limits.push(
        `--max-amount ${currency}=${formatAmountForPeople(limit)} but row ${largest.rowNumber} (${quoted(largest.reference)}) pays ${currency} ${formatAmountForPeople(largest.minor)}`,
      );
    }
  }
  // " | " between findings: no message of payouts holds "; " (README "The sheet and the results file").
  const parts: string[] = [];
  if (totals.length > 0)
    parts.push(`control totals do not match, so nothing was sent: ${totals.join(' | ')}`);
  if (limits.length > 0) {
    parts.push(
      `a payout is above its --max-amount, so nothing was sent: ${limits.join(' | ')}: check that row, or raise the limit if it is right`,
    );
  }
  if (parts.length > 0) throw new GuardError(parts.join(' | '));
}

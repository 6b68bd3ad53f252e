import { GuardError, UsageError } from '../errors.js';
import { parseAmount } from '../rows/money.js';
import { type BatchSummary, formatAmountForPeople } from './summary.js';

/** Control totals of PRODUCT.md: `--expect-count N`, `--expect-total CUR=AMOUNT` (repeatable). */
export interface ControlTotals {
  expectCount?: number;
  expectTotals: Map<string, bigint>;
}

/** Parses `--expect-total` values such as `USD=1234.50`; a malformed one is a usage error. */
export function parseExpectTotals(values: readonly string[]): Map<string, bigint> {
  const totals = new Map<string, bigint>();
  for (const value of values) {
    const match = /^\s*([A-Za-z]{3})\s*=\s*(.+)$/.exec(value);
    const amount = match ? parseAmount(match[2]!) : undefined;
    if (!match || !amount?.ok) {
      throw new UsageError(
        `--expect-total "${value}" is not CUR=AMOUNT with a 3-letter currency and a decimal amount, e.g. --expect-total USD=1234.50`,
      );
    }
    const currency = match[1]!.toUpperCase();
    if (totals.has(currency)) throw new UsageError(`--expect-total names ${currency} twice`);
    totals.set(currency, amount.minor);
  }
  return totals;
}

/**
 * Checks the sheet against its control totals. The count is of every data row; the totals
 * are of every row's amount per currency (valid or not), so they describe the file as the
 * finance team prepared it; a currency without --expect-total is not checked. Throws a GuardError (exit 4) listing every mismatch.
 */
export function checkControlTotals(summary: BatchSummary, expected: ControlTotals): void {
  const problems: string[] = [];
  if (expected.expectCount !== undefined && expected.expectCount !== summary.rows) {
    problems.push(`--expect-count ${expected.expectCount} but the sheet has ${summary.rows} rows`);
  }
  for (const [currency, minor] of expected.expectTotals) {
    const actual = summary.sheetTotals.get(currency) ?? 0n;
    if (actual !== minor) {
      problems.push(
        `--expect-total ${currency}=${formatAmountForPeople(minor)} but the sheet's ${currency} amounts add up to ${formatAmountForPeople(actual)}`,
      );
    }
  }
  if (problems.length > 0) {
    throw new GuardError(`control totals do not match, so nothing was sent: ${problems.join('; ')}`);
  }
}

/**
 * Fixed-point helpers for quotes: bigint only, never a float, so no cent is ever lost to
 * rounding. Amounts themselves are parsed and formatted by src/rows/money.ts, the same rules as
 * the sheet.
 */

/** A fixed-point value with `scale` decimals as text: formatFixed(17250000n, 6) is "17.250000". */
export function formatFixed(value: bigint, scale: number): string {
  const negative = value < 0n;
  const digits = (negative ? -value : value).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const text = scale === 0 ? whole : `${whole}.${digits.slice(digits.length - scale)}`;
  return negative ? `-${text}` : text;
}

/** numerator / denominator rounded half up (both positive). */
export function divideHalfUp(numerator: bigint, denominator: bigint): bigint {
  return (numerator * 2n + denominator) / (denominator * 2n);
}

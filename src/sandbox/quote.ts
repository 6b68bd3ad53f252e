import type { Currency } from '../columns/rails.js';
import { formatMinor } from '../rows/money.js';
import { divideHalfUp, formatFixed } from './money.js';

/** fxRate has 6 decimals: a rate is held as an integer of millionths. */
const RATE_SCALE = 1_000_000n;

/**
 * Mid-market rates in units of the currency per USD (millionths). The sandbox's own figures:
 * plausible, not live. Each quote moves its rate by up to ±1% with the seeded PRNG.
 */
const BASE_RATES: Record<Currency, bigint> = {
  USD: 1_000_000n,
  MXN: 17_250_000n,
  BRL: 5_100_000n,
  COP: 3_950_000_000n,
};

/** Fee for a payout in another currency: 0.50% of the converted USD amount, at least 1.00 USD. */
const FEE_BASIS_POINTS = 50n;
const MIN_FEE_CENTS = 100n;
const MAX_VARIATION_PPM = 10_000;

export interface Quote {
  fxRate: string;
  fee: string;
  /** What the integrator pays in USD: the converted amount plus the fee. */
  sourceAmount: string;
}

/**
 * The quote for paying `amountMinor` (cents of `currency`) funded in USD. `u` in [0, 1) is the
 * request's draw of the seeded PRNG. USD pays at rate 1 with no fee. Otherwise the USD cost is
 * amount / rate rounded half up to the cent, the fee is rounded half up to the cent, and
 * sourceAmount is their sum: every step is bigint arithmetic on minor units.
 */
export function quote(amountMinor: bigint, currency: string, u: number): Quote {
  const base = BASE_RATES[currency as Currency];
  if (base === undefined) throw new Error(`the sandbox has no rate for ${currency}`);
  if (currency === 'USD') {
    return {
      fxRate: formatFixed(RATE_SCALE, 6),
      fee: formatMinor(0n),
      sourceAmount: formatMinor(amountMinor),
    };
  }
  const variationPpm = BigInt(Math.floor(u * (2 * MAX_VARIATION_PPM + 1)) - MAX_VARIATION_PPM);
  const rate = divideHalfUp(base * (RATE_SCALE + variationPpm), RATE_SCALE);
  const converted = divideHalfUp(amountMinor * RATE_SCALE, rate);
  const percentageFee = divideHalfUp(converted * FEE_BASIS_POINTS, 10_000n);
  const fee = percentageFee > MIN_FEE_CENTS ? percentageFee : MIN_FEE_CENTS;
  return { fxRate: formatFixed(rate, 6), fee: formatMinor(fee), sourceAmount: formatMinor(converted + fee) };
}

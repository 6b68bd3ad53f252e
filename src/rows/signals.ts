/**
 * The names of the approver's warnings a row can carry (batch/warnings.ts computes them): a list
 * of its own, so that what names them (an approval policy's `warnings` condition) need not load
 * how they are computed.
 */
export const SIGNALS = ['newPayee', 'changedBankDetails', 'possibleDuplicate', 'unusualAmount'] as const;
export type Signal = (typeof SIGNALS)[number];

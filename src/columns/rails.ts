/** The payment rails and the currency each one carries (docs/service.md "Rail details"). */
export const RAILS = ['ACH', 'WIRE', 'SWIFT', 'RTP', 'SPEI', 'PIX', 'COP'] as const;
export type Rail = (typeof RAILS)[number];

export const CURRENCIES = ['USD', 'MXN', 'BRL', 'COP'] as const;
export type Currency = (typeof CURRENCIES)[number];

export const RAIL_CURRENCY: Record<Rail, Currency> = {
  ACH: 'USD',
  WIRE: 'USD',
  SWIFT: 'USD',
  RTP: 'USD',
  SPEI: 'MXN',
  PIX: 'BRL',
  COP: 'COP',
};

/** The rail named by a sheet's `type` cell, which may be in any case (docs/sheets.md). */
export function parseRail(text: string): Rail | undefined {
  const upper = text.trim().toUpperCase();
  return (RAILS as readonly string[]).includes(upper) ? (upper as Rail) : undefined;
}

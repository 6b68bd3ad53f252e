/**
 * ISO 8601 with an explicit offset (docs/service.md "Error body"):
 * `2026-11-21T03:04:05.123+00:00`.
 */
export function isoWithOffset(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}+00:00`;
}

/**
 * ISO 8601 without a zone designator, the shape of `createdAt` (docs/service.md "Webhook
 * payload").
 */
export function isoWithoutZone(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23);
}

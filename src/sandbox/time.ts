/** ISO 8601 with an explicit offset (SPEC.md 2.5): `2026-11-21T03:04:05.123+00:00`. */
export function isoWithOffset(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 23)}+00:00`;
}

/** ISO 8601 without a zone designator, the shape of SPEC.md 2.2 `createdAt`. */
export function isoWithoutZone(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23);
}

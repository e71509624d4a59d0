/** Page sizes of the store's lists (runs, notifications), shared by every store. */

/** Default and maximum page size of a list. */
export const LIST_LIMIT = { default: 100, max: 1000 } as const;

/** Clamps a list's `limit` to 0..{@link LIST_LIMIT.max}; absent or not finite → the default. */
export function clampListLimit(limit: number | undefined): number {
  if (limit === undefined || !Number.isFinite(limit)) return LIST_LIMIT.default;
  return Math.min(LIST_LIMIT.max, Math.max(0, Math.trunc(limit)));
}

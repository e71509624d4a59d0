import { nextFires, toLocalRfc3339 } from '../../src/contract/schedule/index.js';

/** The next `count` fires after `fromIso` as local RFC 3339 strings (offset included). */
export function localFires(
  expr: string,
  timezone: string,
  fromIso: string,
  count: number,
): string[] {
  return nextFires(expr, { timezone, from: Date.parse(fromIso), count }).map((d) =>
    toLocalRfc3339(timezone, d.getTime()),
  );
}

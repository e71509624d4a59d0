/**
 * The one way an input value is echoed in an error message or log line: JSON
 * quoted and cut to {@link MAX_ECHO} characters, so a 1 MB time zone, flag or
 * header name gives a short, readable message instead of a 2 MB log line.
 * Used by the contract's messages, the lock room and the trigger shim.
 */

/** Longest part of a value echoed verbatim; the rest is summarized. */
export const MAX_ECHO = 200;

/**
 * `text` cut to at most `max` characters, ending in `…(N more characters)` when
 * cut; never splits a surrogate pair.
 */
export function cut(text: string, max = MAX_ECHO): string {
  if (text.length <= max) return text;
  let end = max;
  for (let i = 0; i < 2; i++) {
    // the marker's length depends on how much is cut; two rounds settle it
    end = Math.max(0, max - `…(${text.length - end} more characters)`.length);
  }
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // keep a surrogate pair whole
  return `${text.slice(0, end)}…(${text.length - end} more characters)`;
}

/** `text` as a JSON string literal, cut to `max` characters first. */
export function echo(text: string, max = MAX_ECHO): string {
  return JSON.stringify(cut(text, max));
}

/**
 * Any value (a request body's field: a string, a number, a 5,000-deep array)
 * as short JSON-ish text for an error message. Never throws, whatever the
 * nesting (`JSON.stringify` would overflow its stack), size or type.
 */
export function echoValue(value: unknown, max = MAX_ECHO): string {
  if (typeof value === 'string') return echo(value, max);
  const out: string[] = [];
  let length = 0;
  const push = (text: string): boolean => {
    out.push(text);
    length += text.length;
    return length <= max;
  };
  const walk = (v: unknown, depth: number): boolean => {
    if (typeof v === 'string') return push(echo(v, max));
    if (typeof v === 'number' || typeof v === 'boolean' || v === null) return push(String(v));
    if (typeof v !== 'object') return push(typeof v);
    if (depth >= 3) return push(Array.isArray(v) ? '[…]' : '{…}');
    const entries = Array.isArray(v) ? v.map((x) => [null, x] as const) : Object.entries(v);
    if (!push(Array.isArray(v) ? '[' : '{')) return false;
    for (const [i, [k, x]] of entries.entries()) {
      if (i > 0 && !push(',')) return false;
      if (k !== null && !push(`${echo(k, max)}:`)) return false;
      if (!walk(x, depth + 1)) return false;
    }
    return push(Array.isArray(v) ? ']' : '}');
  };
  walk(value, 0);
  return cut(out.join(''), max);
}

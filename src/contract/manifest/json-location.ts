/**
 * Locates the first syntax error of JSON text (RFC 8259), so a manifest syntax error can name
 * its line and column whatever the JavaScript engine's `JSON.parse` message says. Iterative:
 * deep nesting cannot overflow the stack.
 */

/** A located JSON syntax error. */
export interface JsonSyntaxProblem {
  /** 1-based line. */
  line: number;
  /** 1-based column, in UTF-16 code units. */
  column: number;
  /** What is wrong at that place, e.g. `unexpected ","`. */
  reason: string;
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const HEX4 = /^[0-9a-fA-F]{4}$/;

/** Index just after the string starting at `start` (a `"`), or the negated index of the error minus 1. */
function scanString(text: string, start: number): number {
  let i = start + 1;
  while (i < text.length) {
    const code = text.charCodeAt(i);
    if (code === 0x22) return i + 1;
    if (code < 0x20) return -i - 1;
    if (code === 0x5c) {
      const next = text[i + 1];
      if (next === 'u') {
        if (!HEX4.test(text.slice(i + 2, i + 6))) return -(i + 1) - 1;
        i += 6;
        continue;
      }
      if (next === undefined || !'"\\/bfnrt'.includes(next)) return -(i + 1) - 1;
      i += 2;
      continue;
    }
    i++;
  }
  return -text.length - 1;
}

function skipWhitespace(text: string, from: number): number {
  let i = from;
  while (i < text.length && ' \t\n\r'.includes(text[i] ?? '')) i++;
  return i;
}

/** Scans one scalar value at `i`; returns the index after it, or -1. */
function scanScalar(text: string, i: number): number {
  for (const literal of ['true', 'false', 'null'])
    if (text.startsWith(literal, i)) return i + literal.length;
  NUMBER.lastIndex = i;
  return NUMBER.test(text) ? NUMBER.lastIndex : -1;
}

/** Offset of the first syntax error, or -1 when the text is valid JSON. */
export function jsonErrorOffset(text: string): number {
  const stack: string[] = [];
  let state: 'value' | 'value-or-close' | 'key' | 'key-or-close' | 'after' = 'value';
  let i = 0;
  for (;;) {
    i = skipWhitespace(text, i);
    const c = text[i];
    if (state === 'after') {
      const top = stack.at(-1);
      if (top === undefined) return i === text.length ? -1 : i;
      if (c === ',') {
        state = top === '{' ? 'key' : 'value';
        i++;
      } else if ((c === '}' && top === '{') || (c === ']' && top === '[')) {
        stack.pop();
        i++;
      } else {
        return i;
      }
    } else if (state === 'key' || state === 'key-or-close') {
      if (c === '}' && state === 'key-or-close') {
        stack.pop();
        state = 'after';
        i++;
        continue;
      }
      if (c !== '"') return i;
      const end = scanString(text, i);
      if (end < 0) return -end - 1;
      i = skipWhitespace(text, end);
      if (text[i] !== ':') return i;
      state = 'value';
      i++;
    } else {
      if (c === ']' && state === 'value-or-close') {
        stack.pop();
        state = 'after';
        i++;
      } else if (c === '{' || c === '[') {
        stack.push(c);
        state = c === '{' ? 'key-or-close' : 'value-or-close';
        i++;
      } else if (c === '"') {
        const end = scanString(text, i);
        if (end < 0) return -end - 1;
        state = 'after';
        i = end;
      } else {
        const end = scanScalar(text, i);
        if (end < 0) return i;
        state = 'after';
        i = end;
      }
    }
  }
}

/** Line/column and reason of the first syntax error of `text`, or null when it is valid JSON. */
export function locateJsonSyntaxError(text: string): JsonSyntaxProblem | null {
  const offset = jsonErrorOffset(text);
  if (offset < 0) return null;
  const before = text.slice(0, offset);
  const lines = before.split(/\r\n|\r|\n/);
  const found = text[offset];
  const reason =
    found === undefined
      ? 'unexpected end of text'
      : found.charCodeAt(0) < 0x20
        ? `unexpected control character U+${found.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`
        : `unexpected ${JSON.stringify(found)}`;
  return { line: lines.length, column: (lines.at(-1)?.length ?? 0) + 1, reason };
}

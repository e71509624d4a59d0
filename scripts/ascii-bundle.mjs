// Makes the bundled binary's chunks ASCII-only. esbuild escapes non-ASCII characters in strings,
// regular expressions and identifiers (charset 'ascii', its default) but keeps comments as
// they are, and the bundled libraries' comments hold a few (’ — →). One such character is
// enough for V8 to keep the whole chunk's source as a two-byte string: the daemon's serve
// chunk (2.2 MB) was 4.4 MB of its heap for the life of the process (BENCHMARKS.md). Each
// UTF-16 code unit of a comment that is not ASCII is replaced by one ASCII character, so
// every column the source map points at stays where it was. acorn finds the comments (a
// regular expression cannot tell a comment from a string that looks like one); a character
// left outside a comment fails the build.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'acorn';

/** ASCII stand-ins of the characters seen in comments; any other becomes '?'. */
const FOLD = new Map([
  ['\u2018', "'"],
  ['\u2019', "'"],
  ['\u201c', '"'],
  ['\u201d', '"'],
  ['\u2013', '-'],
  ['\u2014', '-'],
  ['\u2212', '-'],
  ['\u2192', '>'],
  ['\u2190', '<'],
  ['\u00a0', ' '],
]);

const NON_ASCII = /[\u0080-\uffff]/;

/** `text` with the non-ASCII code units of its comments folded; throws if any are left. */
export function asciiComments(text, name) {
  if (!NON_ASCII.test(text)) return text;
  const ranges = [];
  parse(text, {
    ecmaVersion: 'latest',
    sourceType: 'module',
    onComment: (_block, _text, start, end) => ranges.push([start, end]),
  });
  const parts = [];
  let at = 0;
  for (const [start, end] of ranges) {
    const comment = text.slice(start, end);
    if (!NON_ASCII.test(comment)) continue;
    parts.push(text.slice(at, start));
    let folded = '';
    for (let i = 0; i < comment.length; i++) {
      const unit = comment[i];
      folded += unit.charCodeAt(0) < 0x80 ? unit : (FOLD.get(unit) ?? '?');
    }
    parts.push(folded);
    at = end;
  }
  parts.push(text.slice(at));
  const out = parts.join('');
  const left = NON_ASCII.exec(out);
  if (left)
    throw new Error(
      `${name}: a non-ASCII character outside comments at offset ${left.index}: ` +
        JSON.stringify(out.slice(Math.max(0, left.index - 40), left.index + 40)),
    );
  return out;
}

/** Folds every `.mjs` chunk in `dir`. */
export function asciiChunks(dir) {
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.mjs'))) {
    const path = join(dir, file);
    const text = readFileSync(path, 'utf8');
    const out = asciiComments(text, file);
    if (out !== text) writeFileSync(path, out);
  }
}

/**
 * Captured command output (SPEC §11): secrets of env_from_secrets redacted on the byte stream
 * whatever the chunking, the per-run cap on what is kept, UTF-8 boundaries.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CapturedOutput, StreamRedactor, utf8Prefix } from '../../src/fire/output.js';
import type { OutputStream } from '../../src/fire/types.js';

/** The oracle: one left-to-right pass, earliest match first, longest at a tie. */
function redactOnce(text: string, secrets: string[]): string {
  const sorted = [...secrets].sort((a, b) => b.length - a.length);
  let out = '';
  let from = 0;
  for (;;) {
    let at = -1;
    let len = 0;
    for (const s of sorted) {
      const i = text.indexOf(s, from);
      if (i >= 0 && (at < 0 || i < at)) [at, len] = [i, s.length];
    }
    if (at < 0) return out + text.slice(from);
    out += `${text.slice(from, at)}[REDACTED]`;
    from = at + len;
  }
}

function capture(maxBytes: number, secrets: string[]) {
  const kept: Record<OutputStream, Buffer[]> = { stdout: [], stderr: [] };
  const events: string[] = [];
  const out = new CapturedOutput(
    {
      data: (s, c) => kept[s].push(Buffer.from(c)),
      attempt: (n) => events.push(`attempt ${n}`),
      truncated: (max) => events.push(`truncated ${max}`),
    },
    { maxBytes, secrets },
  );
  const text = (s: OutputStream): string => Buffer.concat(kept[s]).toString('utf8');
  return { out, text, events, kept };
}

/** Splits `text` into chunks at the given cut points. */
function chunks(text: string, cuts: number[]): Buffer[] {
  const bytes = Buffer.from(text);
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Buffer[] = [];
  let from = 0;
  for (const p of points) {
    out.push(bytes.subarray(from, p));
    from = p;
  }
  out.push(bytes.subarray(from));
  return out;
}

describe('stream redaction', () => {
  it('catches a secret split at every possible position between two chunks', () => {
    const secret = 'hunter2-db-password';
    const text = `before ${secret} after`;
    for (let cut = 0; cut <= text.length; cut++) {
      const r = new StreamRedactor([secret]);
      const got = Buffer.concat([
        r.push(Buffer.from(text.slice(0, cut))),
        r.push(Buffer.from(text.slice(cut))),
        r.flush(),
      ]).toString();
      expect(got, `cut at ${cut}`).toBe('before [REDACTED] after');
    }
  });

  it('hides a longer secret whole when it contains a shorter one', () => {
    const r = new StreamRedactor(['abcd', 'xxabcdxx']);
    const got = Buffer.concat([r.push(Buffer.from('1 xxabcdxx 2 abcd 3')), r.flush()]).toString();
    expect(got).toBe('1 [REDACTED] 2 [REDACTED] 3');
  });

  it('equals one pass of redaction over the whole text, for any chunking (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.oneof(fc.string({ maxLength: 8 }), fc.constant('<S>')), { maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (secrets, parts, cuts) => {
          const text = parts
            .map((p, i) => (p === '<S>' ? secrets[i % secrets.length] : p))
            .join('');
          const r = new StreamRedactor(secrets);
          const got = Buffer.concat([...chunks(text, cuts).map((c) => r.push(c)), r.flush()]);
          // byte-wise redaction equals string redaction on valid UTF-8 input
          expect(got.toString('utf8')).toBe(redactOnce(text, secrets));
          // (a secret sharing a character with "[REDACTED]" could reappear next to it)
          for (const secret of secrets)
            if (![...secret].some((ch) => '[REDACTED]'.includes(ch)))
              expect(got.toString()).not.toContain(secret);
        },
      ),
      { numRuns: 300 },
    );
  });
});

it('overlapping secrets over a two-letter alphabet, any chunking (property)', () => {
  fc.assert(
    fc.property(
      fc.array(fc.stringMatching(/^[ab]{1,4}$/), { minLength: 1, maxLength: 3 }),
      fc.stringMatching(/^[abc]{0,24}$/),
      fc.array(fc.nat(), { maxLength: 8 }),
      (secrets, text, cuts) => {
        const r = new StreamRedactor(secrets);
        const got = Buffer.concat([...chunks(text, cuts).map((c) => r.push(c)), r.flush()]);
        expect(got.toString()).toBe(redactOnce(text, secrets));
      },
    ),
    { numRuns: 500 },
  );
});

describe('captured output', () => {
  it('keeps 100 KB of 3 MB, says it was truncated once, and stays within the cap', () => {
    const { out, text, events } = capture(100 * 1024, []);
    out.attempt(1);
    const line = Buffer.from(`${'x'.repeat(1023)}\n`);
    for (let i = 0; i < 3 * 1024; i++) out.write(i % 2 === 0 ? 'stdout' : 'stderr', line);
    out.end();
    expect(out.truncated).toBe(true);
    expect(out.bytes).toBe(100 * 1024);
    expect(text('stdout').length + text('stderr').length).toBe(100 * 1024);
    expect(events).toEqual(['attempt 1', 'truncated 102400']);
  });

  it('counts bytes after redaction, so a cut never leaves the start of a secret', () => {
    const secret = 'S3CRET-VALUE-0123456789';
    for (let max = 0; max < 40; max++) {
      const { out, text } = capture(max, [secret]);
      out.attempt(1);
      out.write('stdout', Buffer.from(`ab${secret}cd`));
      out.end();
      const kept = text('stdout');
      expect(kept).toBe(`ab[REDACTED]cd`.slice(0, max));
      expect(kept).not.toContain('S3C');
    }
  });

  it('never cuts inside a UTF-8 character', () => {
    const euro = Buffer.from('€€€'); // 3 bytes each
    for (let max = 0; max <= 9; max++) {
      const part = utf8Prefix(euro, max);
      expect(part.length).toBe(Math.floor(max / 3) * 3);
      expect(part.toString('utf8')).not.toContain('\ufffd');
    }
  });

  it('flushes the held-back tail at the end of each attempt, and spans attempts with one cap', () => {
    const { out, text, events } = capture(12, ['long-secret']);
    out.attempt(1);
    out.write('stdout', Buffer.from('one long'));
    expect(text('stdout')).toBe('one '); // "long" is held back: it might begin "long-secret"
    out.attemptEnded(1);
    expect(text('stdout')).toBe('one long');
    out.attempt(2);
    out.write('stdout', Buffer.from('two two two'));
    out.attemptEnded(2);
    out.end();
    expect(text('stdout')).toBe('one longtwo ');
    expect(events).toEqual(['attempt 1', 'attempt 2', 'truncated 12']);
  });
});

/**
 * Fuzz cases for `cronix trigger`: damaged spec files and bad flags, with an
 * oracle that decides, independently of the shim's own checks, whether a case
 * must be refused (exit 3, nothing sent) or must fire. The oracle judges the
 * spec's job with the full manifest parser (`parseManifest`, TypeBox), the
 * shim's hot path with the TypeBox-free `acceptManifest`; they must agree.
 */
import { readFileSync, statSync } from 'node:fs';
import fc from 'fast-check';
import { parseManifest } from '../../src/contract/manifest/index.js';
import { applyMutation, job as jobArb } from '../contract/manifest-arbitraries.js';
import type { Json } from '../contract/manifest-fixtures.js';

/** One megabyte of one character: the "1 MB time zone" of the issue, anywhere. */
export const HUGE = 'A'.repeat(1_000_000);

/** Values a spec field may be damaged with. */
const damage = fc.oneof(
  { weight: 3, arbitrary: fc.jsonValue() },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Json>(
      null,
      -1,
      0,
      5,
      1e308,
      '',
      'x',
      'Bad Name',
      'a\r\nX-Injected: 1',
      '\u0000',
      HUGE,
      [],
      [7],
      {},
      ['env:CRON_SECRET'],
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 40 }) },
);

/** 1..3 edits (pick a (container, key), delete it or replace it with `damage`). */
const edits = fc.array(fc.tuple(fc.nat(), fc.boolean(), damage), { minLength: 1, maxLength: 3 });

/** Edits the issue reported, applied to a valid spec. */
const KNOWN: ((spec: Record<string, Json>) => void)[] = [
  (s) => delete (s['job'] as Record<string, Json>)['auth'],
  (s) => ((s['job'] as Record<string, Json>)['auth'] = null),
  (s) => ((s['job'] as Record<string, Json>)['auth'] = {}),
  (s) => ((s['job'] as Record<string, Json>)['auth'] = 'x'),
  (s) => (s['secret_refs'] = 5),
  (s) => (s['secret_refs'] = [7]),
  (s) => ((s['job'] as { request: { headers: Json } }).request.headers = { '': 'v' }),
  (s) => ((s['job'] as { request: { headers: Json } }).request.headers = { 'Bad Name': 'v' }),
  (s) =>
    ((s['job'] as { request: { headers: Json } }).request.headers = { 'a\r\nX-Injected: 1': 'v' }),
  (s) =>
    ((s['job'] as { request: { headers: Json } }).request.headers = { ok: 'a\r\nX-Injected: 1' }),
  (s) => ((s['job'] as Record<string, Json>)['timezone'] = HUGE),
  (s) => ((s['job'] as Record<string, Json>)['schedules'] = [HUGE]),
  (s) => ((s['job'] as Record<string, Json>)['name'] = HUGE),
  (s) => (s['schedule_index'] = 99),
  (s) => delete s['job'],
];

/** A spec file's text and how it was made. */
export interface SpecCase {
  text: string;
  how: string;
}

/** Spec files: a valid spec for `app.job` (URL `url`) damaged at random, known bad edits, and non-specs. */
export function specCases(url: string): fc.Arbitrary<SpecCase> {
  const valid = jobArb.map((j) => {
    const job: Record<string, Json> = { ...(j as Record<string, Json>), name: 'job' };
    // HTTP jobs only: a fuzzed command job would run random argv on this machine
    // (command specs are tested with chosen programs in trigger-command.test.ts)
    delete job['command'];
    job['request'] = { ...(job['request'] as Record<string, Json>), url };
    return { app: 'app', schedule_index: 0, secret_refs: ['env:CRON_SECRET'], job } as Record<
      string,
      Json
    >;
  });
  const mutated = fc.tuple(valid, edits).map(([spec, e]) => {
    const copy = JSON.parse(JSON.stringify(spec)) as Record<string, Json>;
    applyMutation(copy, e);
    return { text: JSON.stringify(copy), how: 'random edits' };
  });
  const known = fc.tuple(valid, fc.integer({ min: 0, max: KNOWN.length - 1 })).map(([spec, k]) => {
    const copy = JSON.parse(JSON.stringify(spec)) as Record<string, Json>;
    KNOWN[k]?.(copy);
    return { text: JSON.stringify(copy), how: `known edit ${k}` };
  });
  const notSpecs = fc.oneof(
    fc.string({ maxLength: 60 }).map((text) => ({ text, how: 'text' })),
    fc.jsonValue().map((v) => ({ text: JSON.stringify(v) ?? 'null', how: 'json value' })),
    valid.map((s) => ({ text: JSON.stringify(s).slice(0, -7), how: 'truncated' })),
  );
  return fc.oneof(
    { weight: 6, arbitrary: mutated },
    { weight: 2, arbitrary: known },
    { weight: 1, arbitrary: notSpecs },
  );
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** A secret the way SPEC §4 resolves it (env:, file:, raw:, bare = env), or undefined. */
function resolveRef(ref: string, env: NodeJS.ProcessEnv): string | undefined {
  const colon = ref.indexOf(':');
  const prefix = colon > 0 ? ref.slice(0, colon) : '';
  const rest = ref.slice(colon + 1);
  if (prefix === 'raw') return rest || undefined;
  if (prefix === 'file') {
    try {
      if (!statSync(rest).isFile()) return undefined;
      return readFileSync(rest, 'utf8').replace(/\r?\n$/, '') || undefined;
    } catch {
      return undefined;
    }
  }
  return env[prefix === 'env' ? rest : ref] || undefined;
}

/**
 * Why the shim must refuse this spec text for `target` before sending (exit
 * 3), or null when it must fire. Judged with `parseManifest` and the SPEC's
 * rules, not with the shim's code.
 */
export function refusalReason(text: string, target: string, env: NodeJS.ProcessEnv): string | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return 'not JSON';
  }
  if (!isObject(raw)) return 'not an object';
  const parsed = parseManifest({ version: 1, app: raw['app'], jobs: [raw['job']] });
  if (!parsed.ok) return 'job or app invalid';
  const job = parsed.manifest.jobs[0]!;
  const refs = raw['secret_refs'];
  if (refs !== undefined) {
    const probe = { name: 'p', schedule: '@daily', request: { url: 'http://p/' } };
    if (
      !parseManifest({ version: 1, app: 'p', jobs: [{ ...probe, auth: { secret_refs: refs } }] }).ok
    )
      return 'secret_refs invalid';
  }
  const index = raw['schedule_index'];
  if (
    index !== undefined &&
    !(Number.isInteger(index) && (index as number) >= 0 && (index as number) < job.schedules.length)
  )
    return 'schedule_index invalid';
  if (`${parsed.manifest.app}.${job.name}` !== target) return 'describes another job';
  if (job.policy.concurrency === 'Enqueue') return 'Enqueue';
  const chosen = Array.isArray(refs) && refs.length > 0 ? (refs as string[]) : job.auth.secret_refs;
  const secrets = chosen.map((r) => resolveRef(r, env)).filter((s) => s !== undefined);
  if (secrets.length === 0) return 'no secret';
  if (secrets.some((s) => Buffer.byteLength(s) < 16)) return 'short secret';
  return null;
}

/** A bad flag set and the flag (or argument) its message must name. */
export interface FlagCase {
  /** Arguments after `trigger` (the spec dirs are added by the test). */
  args: string[];
  /** Text the error message must contain. */
  names: string;
}

const MAX_FIRE_S = 7_258_118_399; // 2199-12-31T23:59:59Z

/** True when `text` is an instant the shim must accept (an oracle written from the docs). */
function acceptableInstant(text: string): boolean {
  if (/^-?\d+(\.\d+)?$/.test(text)) {
    const s = Number(text);
    return s >= 0 && s <= MAX_FIRE_S;
  }
  if (!/^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(text))
    return false;
  const ms = Date.parse(text.replace(' ', 'T'));
  return Number.isFinite(ms) && ms >= 0 && ms <= MAX_FIRE_S * 1000;
}

const badFireTime = fc
  .oneof(
    fc.stringMatching(/^[1-9]\d{10,25}$/),
    fc.stringMatching(/^-[1-9]\d{0,12}$/),
    fc.constantFrom(
      '9999999999999',
      '99999999999999999999',
      '7258118400',
      '-0.5',
      '1e9',
      'NaN',
      'Infinity',
      '2200-01-01T00:00:00Z',
      '9999-12-31T23:59:59Z',
      '1969-12-31T23:59:59Z',
      '2026-13-01T00:00:00Z',
      'yesterday',
      '',
      HUGE.slice(0, 100_000),
    ),
    fc
      .tuple(fc.integer({ min: 2200, max: 9999 }), fc.integer({ min: 1, max: 12 }))
      .map(([y, m]) => `${y}-${String(m).padStart(2, '0')}-01T00:00:00Z`),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
  )
  .filter((t) => !acceptableInstant(t));

const KNOWN_FLAGS = [
  'spec-dir',
  'lock-dir',
  'state-dir',
  'lock-backend',
  'fire-time',
  'contended-exit',
  'metrics-textfile',
  'help',
  'backend',
  'otel',
];

/** Flag sets that must be refused with exit 3, naming what is wrong. */
export const flagCases: fc.Arbitrary<FlagCase> = fc.oneof(
  badFireTime.map((t) => ({ args: ['app.job', `--fire-time=${t}`], names: '--fire-time' })),
  fc
    .string({ maxLength: 12 })
    .filter((v) => v !== '4' && v !== '75')
    .map((v) => ({ args: ['app.job', `--contended-exit=${v}`], names: '--contended-exit' })),
  fc
    .stringMatching(/^[a-z][a-z0-9-]{0,20}$/)
    .filter((f) => !KNOWN_FLAGS.includes(f))
    .map((f) => ({ args: ['app.job', `--${f}`, 'x'], names: `unknown option "--${f}"` })),
  fc
    .oneof(
      fc.string({ maxLength: 30 }),
      fc.constantFrom('App.Job', 'app', 'app.job.x', '.job', 'app.', HUGE.slice(0, 100_000)),
    )
    .filter((t) => !/^[a-z][a-z0-9-]{0,62}\.[a-z][a-z0-9-]{0,62}$/.test(t) && !t.startsWith('-'))
    .map((t) => ({ args: [t], names: '<app>.<job> must look like' })),
  fc.constantFrom<FlagCase>(
    { args: [], names: 'expected exactly one <app>.<job> argument, found 0' },
    { args: ['app.job', 'app.other'], names: 'expected exactly one <app>.<job> argument, found 2' },
  ),
);

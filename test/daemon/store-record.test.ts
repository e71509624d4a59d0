/**
 * `withSeq` (src/daemon/store/record.ts): the record of a new run with its `seq`, equal to
 * `{ ...run, seq }`, and — unlike that spread in node 20 — every record it makes shares one
 * hidden class (checked with V8's `%HaveSameMap` in a child node process).
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { withSeq } from '../../src/daemon/store/record.js';
import type { NewRun } from '../../src/daemon/store/types.js';

const run = (i: number): NewRun => ({
  id: `0190-${i}`,
  runKey: `app/job#2026-11-23T00:00:0${i % 10}Z#abc`,
  app: 'app',
  job: `job${i}`,
  scheduleIndex: i % 3 === 0 ? null : 0,
  scheduledTime: 1_790_000_000_000 + i,
  trigger: 'schedule',
  phase: i % 2 === 0 ? 'running' : 'queued',
  outcome: null,
  attempts: 0,
  lastStatus: null,
  createdAt: 1_790_000_000_000,
  startedAt: i % 2 === 0 ? 1_790_000_000_000 : null,
  endedAt: null,
  dueAt: null,
  error: null,
  attemptLog: [],
  outputTruncated: false,
  outputLost: null,
});

it('is the run with its seq, nothing more or less', () => {
  for (let i = 0; i < 5; i++) {
    const r = run(i);
    // host-mode fields (absent on the daemon's own runs) are always there, null: one map for all
    const host = {
      host: null,
      exitCode: null,
      clockSkewMs: null,
      latenessMs: null,
      fencingToken: null,
      params: undefined, // only runs with parameters carry them; the key is on every record
    };
    expect(withSeq(r, i + 1)).toStrictEqual({ ...r, seq: i + 1, ...host });
    expect(Object.keys(withSeq(r, 1))).toEqual([...Object.keys(r), 'seq', ...Object.keys(host)]);
  }
});

it('gives every record the same hidden class (V8)', () => {
  const record = fileURLToPath(new URL('../../src/daemon/store/record.ts', import.meta.url));
  const script = `
    const { withSeq } = await import(${JSON.stringify(record)});
    const make = (i) => ({ id: 'r' + i, runKey: 'k' + i, app: 'a', job: 'j' + i, scheduleIndex: 0,
      scheduledTime: 1e12 + i, trigger: 'schedule', phase: 'queued', outcome: null, attempts: 0,
      lastStatus: null, createdAt: 1e12, startedAt: null, endedAt: null, dueAt: null, error: null,
      attemptLog: [], outputTruncated: false });
    // the path the ledger takes: a planned copy of the new run, then the store's record
    const rows = Array.from({ length: 500 }, (_, i) => ({ ...make(i), phase: 'running', startedAt: 5 }));
    const records = rows.map((r, i) => withSeq(r, i + 1));
    let same = 0;
    for (let i = 1; i < records.length; i++) if (%HaveSameMap(records[i], records[i - 1])) same++;
    console.log(JSON.stringify({ same, of: records.length - 1 }));
  `;
  const out = execFileSync(
    process.execPath,
    ['--allow-natives-syntax', '--import', 'tsx', '--input-type=module', '-e', script],
    { encoding: 'utf8' },
  );
  expect(JSON.parse(out.trim())).toEqual({ same: 499, of: 499 });
});

/**
 * The ordered writer (issue 12): run ends (lazy writes) wait while a burst of
 * requests is still leaving — never longer than MAX_LAZY_HOLD_MS — and an
 * urgent write takes every pending write with it, in order.
 */
import { describe, expect, it } from 'vitest';
import {
  GROUP_COMMIT_MS,
  INDEPENDENT_GROUP,
  Ledger,
  MAX_LAZY_HOLD_MS,
} from '../../src/daemon/ledger.js';
import type { LedgerOp, LedgerResult, Store } from '../../src/daemon/store/types.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** Waits (a macrotask at a time, at most 1 s) until `cond` holds. */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 1));
  expect(cond()).toBe(true);
}

/** A store that records each transaction's ops and the clock's time when it ran. */
function recordingStore(clock: { now(): number } = { now: () => performance.now() }) {
  const writes: { at: number; ops: readonly LedgerOp[] }[] = [];
  const store = {
    write(ops: readonly LedgerOp[]): Promise<LedgerResult[]> {
      writes.push({ at: clock.now(), ops });
      return Promise.resolve(ops.map(() => ({ kind: 'gone' }) as LedgerResult));
    },
  } as unknown as Store;
  return { store, writes };
}

const end = (id: string): LedgerOp => ({
  kind: 'end',
  id,
  patch: { outcome: 'success', endedAt: 1, error: null },
});

/** A ledger on a fake clock: its group-commit window and lazy hold move only as the test says. */
function onFakeClock(holdLazy: () => boolean) {
  const clock = new ManualClock(0);
  const { store, writes } = recordingStore(clock);
  const ledger = new Ledger(store, { clock, onError: () => undefined, holdLazy });
  return { clock, ledger, writes };
}

describe('lazy writes during a burst', () => {
  it('wait while the burst goes on, and are written once it is over', async () => {
    let burst = true;
    const { clock, ledger, writes } = onFakeClock(() => burst);
    const done = ledger.submit([end('a')], false);
    await clock.advance(GROUP_COMMIT_MS * 6);
    expect(writes).toHaveLength(0);
    burst = false;
    await clock.advance(GROUP_COMMIT_MS);
    await done;
    expect(writes.map((w) => w.ops.length)).toEqual([1]);
  });

  it('are never held longer than MAX_LAZY_HOLD_MS', async () => {
    const { clock, ledger, writes } = onFakeClock(() => true);
    const done = ledger.submit([end('a')], false);
    await clock.advance(MAX_LAZY_HOLD_MS - GROUP_COMMIT_MS);
    expect(writes).toHaveLength(0); // still held
    await clock.advance(GROUP_COMMIT_MS);
    await done;
    expect(writes.map((w) => w.at)).toEqual([MAX_LAZY_HOLD_MS]);
  });

  it('an urgent write takes the held ones with it, in submission order', async () => {
    const { clock, ledger, writes } = onFakeClock(() => true);
    const lazy = ledger.submit([end('a'), end('b')], false);
    await clock.advance(GROUP_COMMIT_MS * 2);
    expect(writes).toHaveLength(0);
    await Promise.all([lazy, ledger.submit([end('c')])]);
    expect(writes.flatMap((w) => w.ops.map((op) => (op.kind === 'end' ? op.id : '?')))).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  it('without a burst, a lazy write goes after GROUP_COMMIT_MS', async () => {
    const { clock, ledger, writes } = onFakeClock(() => false);
    const done = ledger.submit([end('a')], false);
    await clock.advance(GROUP_COMMIT_MS - 1);
    expect(writes).toHaveLength(0);
    await clock.advance(1);
    await done;
    expect(writes.map((w) => w.at)).toEqual([GROUP_COMMIT_MS]);
  });
});

describe('groups answered by a callback (submitThen)', () => {
  it('are written in order with promised ones, answered once each, never synchronously; refused after a shutdown', async () => {
    const { clock, ledger, writes } = onFakeClock(() => false);
    const answers: string[] = [];
    ledger.submitThen([end('a')], false, (r) => answers.push(`a:${r.map((x) => x.kind).join()}`));
    const b = ledger.submit([end('b')], false).then(() => answers.push('b'));
    ledger.submitThen([end('c'), end('d')], false, (r) => answers.push(`cd:${r.length}`));
    expect(answers).toEqual([]);
    await clock.advance(GROUP_COMMIT_MS);
    await b;
    await ledger.idle();
    expect(writes.flatMap((w) => w.ops.map((op) => (op.kind === 'end' ? op.id : '?')))).toEqual([
      'a',
      'b',
      'c',
      'd',
    ]);
    expect(answers).toEqual(['a:gone', 'b', 'cd:2']);

    expect(ledger.abandon()).toBe(0);
    let refused: LedgerResult[] | undefined;
    ledger.submitThen([end('e')], true, (r) => (refused = r));
    expect(refused).toBeUndefined(); // not synchronously, even when refused
    await Promise.resolve();
    expect(refused).toEqual([{ kind: 'fenced' }]);
    expect(writes.flatMap((w) => w.ops)).toHaveLength(4);
  });

  it('are answered once when the ledger shuts down while their write is in flight', async () => {
    let commit: (() => void) | undefined;
    const writes: (readonly LedgerOp[])[] = [];
    const store = {
      write(ops: readonly LedgerOp[]): Promise<LedgerResult[]> {
        writes.push(ops);
        return new Promise((resolve) => {
          commit = () => resolve(ops.map(() => ({ kind: 'ok' }) as LedgerResult));
        });
      },
    } as unknown as Store;
    const ledger = new Ledger(store, { onError: () => undefined });
    const answers: string[] = [];
    ledger.submitThen([end('a')], true, (r) => answers.push(`a:${r.map((x) => x.kind).join()}`));
    const b = ledger.submit([end('b')], true);
    await until(() => commit !== undefined);
    expect(writes).toHaveLength(1); // a and b, together, in flight
    expect(ledger.abandon()).toBe(2); // given up: their write may not be durable when we exit
    commit!(); // it is, after all; they were already answered
    await ledger.idle();
    await new Promise((r) => setImmediate(r));
    expect(answers).toEqual(['a:fenced']); // once (a second answer would end a run twice)
    expect(await b).toEqual([{ kind: 'fenced' }]);
  });
});

describe('independent ops (first-seen checkpoints)', () => {
  it('go in groups of INDEPENDENT_GROUP, in order, all durable when it resolves', async () => {
    const { store, writes } = recordingStore();
    const ledger = new Ledger(store, { onError: () => undefined });
    const ops = Array.from({ length: 2 * INDEPENDENT_GROUP + 500 }, (_, i) => end(`r${i}`));
    await ledger.submitIndependent(ops);
    expect(writes.flatMap((w) => w.ops)).toEqual(ops);
    // a group never splits across transactions: each one ends on a group boundary
    let written = 0;
    for (const w of writes) {
      written += w.ops.length;
      expect(written % INDEPENDENT_GROUP === 0 || written === ops.length).toBe(true);
    }
    expect(writes.length).toBeGreaterThanOrEqual(2);
    await ledger.submitIndependent([]); // nothing to write: resolves at once
    expect(writes.flatMap((w) => w.ops)).toHaveLength(ops.length);
  });
});

describe('a failing store', () => {
  it('is retried on the clock, says since when it fails, and a shutdown gives up counting what was lost', async () => {
    const clock = new ManualClock(0);
    let failing = true;
    const writes: number[] = [];
    const store = {
      write(ops: readonly LedgerOp[]): Promise<LedgerResult[]> {
        writes.push(clock.now());
        if (failing) return Promise.reject(new Error('SQLITE_FULL: database or disk is full'));
        return Promise.resolve(ops.map(() => ({ kind: 'gone' }) as LedgerResult));
      },
    } as unknown as Store;
    const errors: number[] = [];
    const ledger = new Ledger(store, { clock, onError: (_e, retryInMs) => errors.push(retryInMs) });
    expect(ledger.health()).toBeNull();
    const first = ledger.submit([end('a'), end('b')]);
    await clock.advance(0);
    expect(writes).toEqual([0]);
    await clock.advance(100 + 200 + 400); // three retries, backing off
    expect(writes).toEqual([0, 100, 300, 700]);
    expect(errors).toEqual([100, 200, 400, 800]);
    expect(ledger.health()).toEqual({
      failingForMs: 700,
      error: 'SQLITE_FULL: database or disk is full',
    });
    const second = ledger.submit([end('c')]);
    expect(ledger.abandon()).toBe(3); // a and b (being retried) and c
    expect(await first).toEqual([{ kind: 'fenced' }, { kind: 'fenced' }]);
    expect(await second).toEqual([{ kind: 'fenced' }]);
    failing = false;
    await clock.advance(10_000);
    expect(writes).toHaveLength(4); // no retry after the shutdown gave up
    expect(await ledger.submit([end('d')])).toEqual([{ kind: 'fenced' }]);
  });
});

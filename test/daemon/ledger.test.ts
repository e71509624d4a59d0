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

/** A store that records each transaction's ops and when it ran. */
function recordingStore() {
  const writes: { at: number; ops: readonly LedgerOp[] }[] = [];
  const store = {
    write(ops: readonly LedgerOp[]): Promise<LedgerResult[]> {
      writes.push({ at: performance.now(), ops });
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
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('lazy writes during a burst', () => {
  it('wait while the burst goes on, and are written once it is over', async () => {
    const { store, writes } = recordingStore();
    let burst = true;
    const ledger = new Ledger(store, { onError: () => undefined, holdLazy: () => burst });
    const done = ledger.submit([end('a')], false);
    await sleep(GROUP_COMMIT_MS * 6);
    expect(writes).toHaveLength(0);
    burst = false;
    await done;
    expect(writes.map((w) => w.ops.length)).toEqual([1]);
  });

  it('are never held longer than MAX_LAZY_HOLD_MS', async () => {
    const { store, writes } = recordingStore();
    const ledger = new Ledger(store, { onError: () => undefined, holdLazy: () => true });
    const t0 = performance.now();
    await ledger.submit([end('a')], false);
    const waited = writes[0]!.at - t0;
    expect(waited).toBeGreaterThanOrEqual(MAX_LAZY_HOLD_MS - 1);
    expect(waited).toBeLessThan(MAX_LAZY_HOLD_MS + 1000);
  });

  it('an urgent write takes the held ones with it, in submission order', async () => {
    const { store, writes } = recordingStore();
    const ledger = new Ledger(store, { onError: () => undefined, holdLazy: () => true });
    const lazy = ledger.submit([end('a'), end('b')], false);
    await sleep(GROUP_COMMIT_MS * 2);
    expect(writes).toHaveLength(0);
    await Promise.all([lazy, ledger.submit([end('c')])]);
    expect(writes.flatMap((w) => w.ops.map((op) => (op.kind === 'end' ? op.id : '?')))).toEqual([
      'a',
      'b',
      'c',
    ]);
  });

  it('without a burst, a lazy write goes after GROUP_COMMIT_MS', async () => {
    const { store, writes } = recordingStore();
    const ledger = new Ledger(store, { onError: () => undefined, holdLazy: () => false });
    const t0 = performance.now();
    await ledger.submit([end('a')], false);
    expect(writes).toHaveLength(1);
    expect(writes[0]!.at - t0).toBeLessThan(MAX_LAZY_HOLD_MS);
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

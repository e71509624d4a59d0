/**
 * The store contract's part for dead letters (SPEC §16): registered inside `storeContract`, so
 * both stores run it.
 */
import { expect, it } from 'vitest';
import type { NewRun, Store } from '../../src/daemon/store/types.js';
import { newRun, T0 } from './store-fixtures.js';

const ended = (o: Partial<NewRun>): NewRun =>
  newRun({ phase: 'ended', endedAt: T0, startedAt: T0, attempts: 1, ...o });

/** Registers the dead-letter tests (call inside the contract's describe). */
export function deadLetterContract(getStore: () => Store): void {
  it('dead letters: the newest failed run of a key not succeeded; a success, an active or failed retry, a dismissal take it out', async () => {
    const store = getStore();
    const a1 = ended({ runKey: 'dl-a', outcome: 'retries_exhausted' });
    const a2 = ended({ runKey: 'dl-a', outcome: 'app_rejected', trigger: 'replay' }); // newer failure
    const b1 = ended({ runKey: 'dl-b', outcome: 'crashed', job: 'other' });
    const b2 = ended({ runKey: 'dl-b', outcome: 'skipped', job: 'other', trigger: 'replay' }); // not a retry that ran
    const c1 = ended({ runKey: 'dl-c', outcome: 'internal_error' });
    const c2 = ended({ runKey: 'dl-c', outcome: 'success', trigger: 'replay' }); // fixed
    const d1 = ended({ runKey: 'dl-d', outcome: 'retries_exhausted' });
    const d2 = newRun({ runKey: 'dl-d', phase: 'running', startedAt: T0, trigger: 'replay' }); // in flight
    const e1 = ended({ runKey: 'dl-e', outcome: 'stopped' }); // not a failure
    const rows = [a1, a2, b1, b2, c1, c2, d1, d2, e1];
    const res = await store.write(rows.map((run) => ({ kind: 'insert' as const, run })));
    expect(res.every((r) => r.kind === 'recorded')).toBe(true);

    const ids = async (f = {}) => (await store.deadLetters(f)).map((r) => r.id);
    expect(await ids()).toEqual([b1.id, a2.id]); // newest first
    expect(await ids({ job: 'other' })).toEqual([b1.id]);
    expect(await ids({ outcomes: ['app_rejected'] })).toEqual([a2.id]);
    expect(await ids({ from: a2.scheduledTime })).toEqual([b1.id, a2.id]);
    expect(await ids({ from: b1.scheduledTime })).toEqual([b1.id]);
    expect(await ids({ to: b1.scheduledTime })).toEqual([a2.id]);
    expect(await ids({ limit: 1 })).toEqual([b1.id]);
    expect(await store.deadLetterCounts()).toEqual([
      { app: 'billing', job: 'other', count: 1 },
      { app: 'billing', job: 'settle', count: 1 },
    ]);

    // the replay in flight fails: its key's dead letter is now the newest failure
    await store.write([
      { kind: 'end', id: d2.id, patch: { outcome: 'retries_exhausted', endedAt: T0, error: 'x' } },
    ]);
    expect(await ids()).toEqual([d2.id, b1.id, a2.id]);

    // dismissing: only dead letters are dismissed, once
    const done = await store.dismissDeadLetters(
      [a2.id, a1.id, c1.id, 'nope'],
      'known bad',
      'cli',
      T0,
    );
    expect(done).toEqual([a2.id]);
    expect(await store.dismissDeadLetters([a2.id], 'again', 'cli', T0)).toEqual([]);
    expect(await ids()).toEqual([d2.id, b1.id]);
    // a later failure of the dismissed key is a dead letter again
    const a3 = ended({ runKey: 'dl-a', outcome: 'retries_exhausted', trigger: 'replay' });
    await store.write([{ kind: 'insert', run: a3 }]);
    expect(await ids()).toEqual([a3.id, d2.id, b1.id]);
  });
}

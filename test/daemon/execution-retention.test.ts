/**
 * What a run keeps while its end waits for its commit: a burst holds its runs' ends back behind
 * its requests (10,000 at once), so what each ended run keeps until then is the daemon's peak
 * memory. Its attempts' state goes when they end: the stop its requests were sent with is
 * collected though the end's write has not been answered; the run's lane is told only after it.
 */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/events.js';
import { Execution } from '../../src/daemon/execution.js';
import type { Ledger } from '../../src/daemon/ledger.js';
import { buildRegistry } from '../../src/daemon/registry.js';
import { newRun } from '../../src/daemon/runs.js';
import { withSeq } from '../../src/daemon/store/record.js';
import type { LedgerOp, LedgerResult, RunRecord, Store } from '../../src/daemon/store/types.js';
import { systemClock } from '../../src/fire/clock.js';
import type { Transport } from '../../src/fire/types.js';
import { until } from '../helpers/common.js';
import { manifest } from '../helpers/daemon.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('a run whose end waits for its commit', () => {
  it('keeps nothing of its attempts: their stop signal is collected; done comes after the commit', async () => {
    const job = buildRegistry([
      manifest('shop', [
        { name: 'a', schedule: '0 * * * *', request: { url: 'http://127.0.0.1:9/' } },
      ]),
    ]).get('shop/a');
    if (!job) throw new Error('no job');
    const sent: WeakRef<object>[] = [];
    const transport: Transport = {
      send: (_request, options) => {
        if (options.signal) sent.push(new WeakRef(options.signal));
        return Promise.resolve({ kind: 'response', status: 200, bodyExcerpt: 'ok' });
      },
    };
    // the ledger answers everything at once but the end, which waits to be released
    let commitEnd: ((r: LedgerResult[]) => void) | undefined;
    const ledger = {
      submitThen(ops: readonly LedgerOp[], _urgent: boolean, then: (r: LedgerResult[]) => void) {
        if (ops[0]?.kind === 'end') commitEnd = then;
        else queueMicrotask(() => then(ops.map(() => ({ kind: 'ok' as const }))));
      },
    } as unknown as Ledger;
    const execution = new Execution({
      store: {} as Store,
      clock: systemClock,
      transport,
      ledger,
      events: new DaemonEmitter(),
      secretsFor: () => ['test-secret-0123456789'],
    });
    execution.knownSuccesses(new Map());
    const now = Date.now();
    const run = withSeq(newRun(job, 0, now, 'schedule', now), 1);
    const done: RunRecord[] = [];
    execution.launch({ job, run, stopReason: () => null, done: (ended) => done.push(ended) });

    await until(() => commitEnd, 5000, 'the end submitted');
    expect(sent).toHaveLength(1);
    // a WeakRef's target lives to the end of the job that made it: collect in a later one
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 0));
      gc();
    }
    expect(sent[0]?.deref(), 'the stop of an ended attempt is garbage').toBeUndefined();
    expect(done).toEqual([]); // release after record
    expect(execution.active).toBe(1);

    commitEnd?.([]);
    await execution.settled();
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ id: run.id, phase: 'ended', outcome: 'success' });
  });
});

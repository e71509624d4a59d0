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

/** An execution of job shop/a whose ledger holds every run's end until the test commits it. */
function heldEnds() {
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
  // the ledger answers everything at once but the ends, which wait to be committed
  const ends = new Map<string, (r: LedgerResult[]) => void>();
  const ledger = {
    submitThen(ops: readonly LedgerOp[], _urgent: boolean, then: (r: LedgerResult[]) => void) {
      const op = ops[0];
      if (op?.kind === 'end') ends.set(op.id, then);
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
  const done: RunRecord[] = [];
  let seq = 0;
  const launch = (): RunRecord => {
    const now = Date.now();
    const run = withSeq(newRun(job, 0, now, 'schedule', now), ++seq);
    execution.launch({ job, run, stopReason: () => null, done: (ended) => done.push(ended) });
    return run;
  };
  return { execution, sent, ends, done, launch };
}

describe('a run whose end waits for its commit', () => {
  it('keeps nothing of its attempts: their stop signal is collected; done comes after the commit', async () => {
    const { execution, sent, ends, done, launch } = heldEnds();
    const run = launch();

    await until(() => ends.get(run.id), 5000, 'the end submitted');
    expect(sent).toHaveLength(1);
    // a WeakRef's target lives to the end of the job that made it: collect in a later one
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 0));
      gc();
    }
    expect(sent[0]?.deref(), 'the stop of an ended attempt is garbage').toBeUndefined();
    expect(done).toEqual([]); // release after record
    expect(execution.active).toBe(1);

    ends.get(run.id)?.([]);
    await execution.settled();
    expect(done).toHaveLength(1);
    expect(done[0]).toMatchObject({ id: run.id, phase: 'ended', outcome: 'success' });
  });

  it('is counted out once its end is answered; settled() waits for runs launched meanwhile', async () => {
    const { execution, ends, done, launch } = heldEnds();
    const a = launch();
    let settled = false;
    const waiting = execution.settled().then(() => (settled = true));
    const b = launch(); // while settled() waits
    await until(() => ends.size === 2 || undefined, 5000, 'both ends submitted');
    expect(execution.active).toBe(2);

    ends.get(a.id)?.([]);
    await until(() => done.length === 1 || undefined, 5000, 'a done');
    await new Promise((r) => setTimeout(r, 0));
    expect(settled, 'b is still running').toBe(false);
    expect(execution.active).toBe(1);

    ends.get(b.id)?.([]);
    await waiting;
    expect(execution.active).toBe(0);
    expect(done.map((r) => r.id)).toEqual([a.id, b.id]);
    await execution.settled(); // none left: at once
  });
});

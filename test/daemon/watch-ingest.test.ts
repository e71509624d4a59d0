/**
 * The report ingest's group commit (SPEC §15): reports that arrive while a write is in progress
 * go together into the next one, each is answered once its batch is durable, a failing batch
 * rejects only its own reports, and order is kept.
 */
import { describe, expect, it } from 'vitest';
import type { ReportResult, ReportWrite } from '../../src/daemon/store/host-types.js';
import { Ingest, MAX_BATCH } from '../../src/daemon/watch/ingest.js';
import { report, write } from './report-fixtures.js';
import { newRun } from './store-fixtures.js';

function fakeStore(fail = (_n: number) => false) {
  const batches: string[][] = [];
  return {
    batches,
    store: {
      async recordReports(writes: readonly ReportWrite[]): Promise<ReportResult[]> {
        batches.push(writes.map((w) => w.report.run.id));
        if (fail(batches.length)) throw new Error('disk full');
        await new Promise((r) => setTimeout(r, 5));
        return writes.map((w) => ({
          kind: 'recorded',
          run: { ...newRun({ id: w.report.run.id }), seq: 1 },
          replaced: null,
        }));
      },
    },
  };
}

describe('report ingest', () => {
  it('reports sent together are one write; later ones the next; each answered with its own result, in order', async () => {
    const f = fakeStore();
    const seen: string[] = [];
    const ingest = new Ingest(f.store, (ws) => seen.push(...ws.map((w) => w.report.run.id)));
    const first = Array.from({ length: 300 }, (_, i) => write(report('ended', i * 60_000)));
    const a = Promise.all(first.map((w) => ingest.submit(w)));
    await new Promise((r) => setImmediate(r)); // the first write is under way
    const second = Array.from({ length: 50 }, (_, i) => write(report('ended', 1e9 + i * 60_000)));
    const b = Promise.all(second.map((w) => ingest.submit(w)));
    const [ra, rb] = await Promise.all([a, b]);
    expect(f.batches.map((x) => x.length)).toEqual([300, 50]);
    expect(ra.map((r) => r.run.id)).toEqual(first.map((w) => w.report.run.id));
    expect(rb.map((r) => r.run.id)).toEqual(second.map((w) => w.report.run.id));
    expect(seen).toEqual([...first, ...second].map((w) => w.report.run.id));
  });

  it(`at most ${MAX_BATCH} per write; a failing write rejects its own reports only`, async () => {
    const f = fakeStore((n) => n === 1);
    const ingest = new Ingest(f.store, () => undefined);
    const writes = Array.from({ length: MAX_BATCH + 10 }, (_, i) =>
      write(report('ended', i * 60_000)),
    );
    const results = await Promise.allSettled(writes.map((w) => ingest.submit(w)));
    expect(f.batches.map((x) => x.length)).toEqual([MAX_BATCH, 10]);
    expect(results.slice(0, MAX_BATCH).every((r) => r.status === 'rejected')).toBe(true);
    expect(results.slice(MAX_BATCH).every((r) => r.status === 'fulfilled')).toBe(true);
  });
});

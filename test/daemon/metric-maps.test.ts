/** The map-backed per-job metrics expose exactly what prom-client's own would. */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { expect, it } from 'vitest';
import { JobCounter, JobGauge, JobHistogram } from '../../src/daemon/metric-maps.js';

/** The exposition lines of one registry, label pairs sorted, for comparison. */
async function lines(r: Registry): Promise<string[]> {
  const text = await r.metrics();
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) =>
      l.replace(/\{([^}]*)\}/, (_m, inner: string) => `{${inner.split(',').sort().join(',')}}`),
    )
    .sort();
}

it('counters, gauges and histograms match prom-client line for line', async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const c1 = new JobCounter('x_runs_total', 'runs', ours, 'outcome');
  const c2 = new Counter({
    name: 'x_runs_total',
    help: 'runs',
    labelNames: ['job', 'outcome'],
    registers: [theirs],
  });
  const g1 = new JobGauge('x_depth', 'depth', ours);
  const g2 = new Gauge({
    name: 'x_depth',
    help: 'depth',
    labelNames: ['job'],
    registers: [theirs],
  });
  const buckets = [0.1, 1, 10];
  const h1 = new JobHistogram('x_seconds', 'secs', ours, buckets);
  const h2 = new Histogram({
    name: 'x_seconds',
    help: 'secs',
    labelNames: ['job'],
    buckets,
    registers: [theirs],
  });
  const jobs = ['a/b', 'a/c', 'd/"e"'];
  let seed = 7;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  for (let i = 0; i < 500; i++) {
    const job = jobs[i % 3]!;
    const outcome = rnd() < 0.7 ? 'success' : 'skipped';
    c1.inc(job, outcome);
    c2.inc({ job, outcome });
    const v = rnd() * 20;
    h1.observe(job, v);
    h2.observe({ job }, v);
    g1.set(job, i);
    g2.set({ job }, i);
  }
  h1.observe('a/b', 0.1); // on a bucket's edge: counted in it (le)
  h2.observe({ job: 'a/b' }, 0.1);
  expect(await lines(ours)).toEqual(await lines(theirs));
});

it('300 jobs (past the rows first grown at 64), some with several outcomes: still line for line', async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const c1 = new JobCounter('y_runs_total', 'runs', ours, 'outcome');
  const c2 = new Counter({
    name: 'y_runs_total',
    help: 'runs',
    labelNames: ['job', 'outcome'],
    registers: [theirs],
  });
  const d1 = new JobCounter('y_dup_total', 'dups', ours);
  const d2 = new Counter({
    name: 'y_dup_total',
    help: 'dups',
    labelNames: ['job'],
    registers: [theirs],
  });
  const buckets = [0.5, 5];
  const h1 = new JobHistogram('y_seconds', 'secs', ours, buckets);
  const h2 = new Histogram({
    name: 'y_seconds',
    help: 'secs',
    labelNames: ['job'],
    buckets,
    registers: [theirs],
  });
  const outcomes = ['success', 'failed', 'timeout'];
  for (let round = 0; round < 3; round++)
    for (let j = 0; j < 300; j++) {
      const job = `app/job-${j}`;
      // job j sees j % 3 + 1 different outcomes, the first one first
      const outcome = outcomes[round % (1 + (j % 3))]!;
      c1.inc(job, outcome, j + 1);
      c2.inc({ job, outcome }, j + 1);
      if (j % 2 === 0) {
        d1.inc(job);
        d2.inc({ job });
      }
      const v = (j % 7) + round / 10;
      h1.observe(job, v);
      h2.observe({ job }, v);
    }
  const got = await lines(ours);
  expect(got).toEqual(await lines(theirs));
  // not vacuous: every job's rows and counts are there, the first and the last
  expect(got).toContain('y_seconds_count{job="app/job-299"} 3');
  expect(got).toContain('y_runs_total{job="app/job-2",outcome="timeout"} 3');
  expect(got).toContain('y_dup_total{job="app/job-298"} 3');
});

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

/** Ours and prom-client's counter of one name, each in its registry: `inc` counts in both. */
function counters(ours: Registry, theirs: Registry, name: string, second?: string) {
  const a = new JobCounter(name, 'help', ours, second);
  const b = new Counter({
    name,
    help: 'help',
    labelNames: second ? ['job', second] : ['job'],
    registers: [theirs],
  });
  return (job: string, value = '', by = 1): void => {
    a.inc(job, value, by);
    b.inc(second ? { job, [second]: value } : { job }, by);
  };
}

/** Ours and prom-client's histogram of one name: `observe` records in both. */
function histograms(ours: Registry, theirs: Registry, name: string, buckets: number[]) {
  const a = new JobHistogram(name, 'help', ours, buckets);
  const b = new Histogram({
    name,
    help: 'help',
    labelNames: ['job'],
    buckets,
    registers: [theirs],
  });
  return (job: string, v: number): void => {
    a.observe(job, v);
    b.observe({ job }, v);
  };
}

it('counters, gauges and histograms match prom-client line for line', async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const runs = counters(ours, theirs, 'x_runs_total', 'outcome');
  const g1 = new JobGauge('x_depth', 'depth', ours);
  const g2 = new Gauge({
    name: 'x_depth',
    help: 'depth',
    labelNames: ['job'],
    registers: [theirs],
  });
  const seconds = histograms(ours, theirs, 'x_seconds', [0.1, 1, 10]);
  const jobs = ['a/b', 'a/c', 'd/"e"'];
  let seed = 7;
  const rnd = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
  for (let i = 0; i < 500; i++) {
    const job = jobs[i % 3]!;
    runs(job, rnd() < 0.7 ? 'success' : 'skipped');
    seconds(job, rnd() * 20);
    g1.set(job, i);
    g2.set({ job }, i);
  }
  seconds('a/b', 0.1); // on a bucket's edge: counted in it (le)
  expect(await lines(ours)).toEqual(await lines(theirs));
});

it('300 jobs (past the rows first grown at 64), some with several outcomes: still line for line', async () => {
  const ours = new Registry();
  const theirs = new Registry();
  const runs = counters(ours, theirs, 'y_runs_total', 'outcome');
  const dups = counters(ours, theirs, 'y_dup_total');
  const seconds = histograms(ours, theirs, 'y_seconds', [0.5, 5]);
  const outcomes = ['success', 'failed', 'timeout'];
  for (let round = 0; round < 3; round++)
    for (let j = 0; j < 300; j++) {
      const job = `app/job-${j}`;
      // job j sees j % 3 + 1 different outcomes, the first one first
      runs(job, outcomes[round % (1 + (j % 3))]!, j + 1);
      if (j % 2 === 0) dups(job);
      seconds(job, (j % 7) + round / 10);
    }
  const got = await lines(ours);
  expect(got).toEqual(await lines(theirs));
  // not vacuous: every job's rows and counts are there, the first and the last
  expect(got).toContain('y_seconds_count{job="app/job-299"} 3');
  expect(got).toContain('y_runs_total{job="app/job-2",outcome="timeout"} 3');
  expect(got).toContain('y_dup_total{job="app/job-298"} 3');
});

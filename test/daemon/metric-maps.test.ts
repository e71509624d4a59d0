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

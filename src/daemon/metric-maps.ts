/**
 * Per-job metrics kept in plain maps and handed to prom-client's registry only
 * when `/metrics` is scraped. prom-client's labelled metrics hash their label
 * object on every update; with 10,000 jobs firing in one second that is tens
 * of thousands of hashes on the dispatch path. Here an update is one map
 * lookup on a key the caller already has (`app/job`), and the text exposition
 * is the same. Written by hand for speed (see docs/daemon.md, "Dispatch").
 */
import type { Registry } from 'prom-client';

type Value = { value: number; labels: Record<string, string>; metricName?: string };

/** What a prom-client registry reads of a metric. */
interface Collectable {
  name: string;
  help: string;
  type: 'counter' | 'gauge' | 'histogram';
  get(): Promise<{ name: string; help: string; type: string; values: Value[]; aggregator: 'sum' }>;
}

abstract class MapMetric implements Collectable {
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  constructor(
    readonly name: string,
    readonly help: string,
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }
  protected abstract values(): Value[];
  async get() {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values: this.values(),
      aggregator: 'sum' as const,
    };
  }
}

/**
 * A counter with a `job` label and, optionally, one more label whose few
 * values the caller names (`outcome`, `result`).
 */
export class JobCounter extends MapMetric {
  readonly type = 'counter';
  private readonly counts = new Map<string, Map<string, number>>();
  constructor(
    name: string,
    help: string,
    registry: Registry,
    private readonly second?: string,
  ) {
    super(name, help, registry);
  }
  inc(job: string, second = '', by = 1): void {
    let m = this.counts.get(job);
    if (!m) this.counts.set(job, (m = new Map()));
    m.set(second, (m.get(second) ?? 0) + by);
  }
  protected values(): Value[] {
    const out: Value[] = [];
    for (const [job, m] of this.counts)
      for (const [v, n] of m)
        out.push({ value: n, labels: this.second ? { job, [this.second]: v } : { job } });
    return out;
  }
}

/** A gauge with a `job` label. */
export class JobGauge extends MapMetric {
  readonly type = 'gauge';
  private readonly levels = new Map<string, number>();
  set(job: string, value: number): void {
    this.levels.set(job, value);
  }
  protected values(): Value[] {
    return [...this.levels].map(([job, value]) => ({ value, labels: { job } }));
  }
}

/** A histogram with a `job` label and fixed buckets. */
export class JobHistogram extends MapMetric {
  readonly type = 'histogram';
  /** Per job: a count per bucket (cumulated when read), then the sum, then the count. */
  private readonly jobs = new Map<string, Float64Array>();
  constructor(
    name: string,
    help: string,
    registry: Registry,
    private readonly buckets: readonly number[],
  ) {
    super(name, help, registry);
  }
  observe(job: string, value: number): void {
    const b = this.buckets;
    let h = this.jobs.get(job);
    if (!h) this.jobs.set(job, (h = new Float64Array(b.length + 2)));
    let i = 0;
    while (i < b.length && value > (b[i] as number)) i++;
    if (i < b.length) h[i] = (h[i] as number) + 1;
    h[b.length] = (h[b.length] as number) + value;
    h[b.length + 1] = (h[b.length + 1] as number) + 1;
  }
  protected values(): Value[] {
    const out: Value[] = [];
    const b = this.buckets;
    for (const [job, h] of this.jobs) {
      let cumulative = 0;
      b.forEach((le, i) => {
        cumulative += h[i] as number;
        out.push({
          value: cumulative,
          labels: { le: String(le), job },
          metricName: `${this.name}_bucket`,
        });
      });
      const count = h[b.length + 1] as number;
      out.push({ value: count, labels: { le: '+Inf', job }, metricName: `${this.name}_bucket` });
      out.push({ value: h[b.length] as number, labels: { job }, metricName: `${this.name}_sum` });
      out.push({ value: count, labels: { job }, metricName: `${this.name}_count` });
    }
    return out;
  }
}

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
 * Rows of `width` numbers, one per key, in one typed array that grows by doubling (a key is an
 * offset into it). A typed array per key costs an `ArrayBuffer` and a native backing store each,
 * ~1 KB where the numbers are a few hundred bytes, and 10,000 were allocated at a burst's first
 * fires. Rows start at zero; there is no removal (a job's metrics outlive it, as prom-client's).
 */
export class KeyedRows<A extends Float64Array | Uint32Array> {
  readonly offsets = new Map<string, number>();
  /** Every row; read it after {@link row}, which may replace it with a grown copy. */
  data: A;
  constructor(
    private readonly width: number,
    private readonly make: (length: number) => A,
  ) {
    this.data = make(width * 64);
  }

  /** The offset of `key`'s row in {@link data}, made (zeros) on first use. */
  row(key: string): number {
    let at = this.offsets.get(key);
    if (at === undefined) {
      at = this.offsets.size * this.width;
      if (at + this.width > this.data.length) {
        const grown = this.make(this.data.length * 2);
        grown.set(this.data);
        this.data = grown;
      }
      this.offsets.set(key, at);
    }
    return at;
  }
}

/**
 * One job's counts: the first value of the second label in the cell itself, others (rare: a
 * job's runs mostly end one way) in a map made when one comes. A map per job was ~300 bytes
 * each, for 10,000 jobs at a burst's first fires.
 */
class Count {
  more: Map<string, number> | null = null;
  constructor(
    readonly second: string,
    public n: number,
  ) {}
}

/**
 * A counter with a `job` label and, optionally, one more label whose few
 * values the caller names (`outcome`, `result`).
 */
export class JobCounter extends MapMetric {
  readonly type = 'counter';
  private readonly counts = new Map<string, Count>();
  constructor(
    name: string,
    help: string,
    registry: Registry,
    private readonly second?: string,
  ) {
    super(name, help, registry);
  }
  inc(job: string, second = '', by = 1): void {
    const c = this.counts.get(job);
    if (!c) this.counts.set(job, new Count(second, by));
    else if (c.second === second) c.n += by;
    else {
      const more = (c.more ??= new Map());
      more.set(second, (more.get(second) ?? 0) + by);
    }
  }
  protected values(): Value[] {
    const out: Value[] = [];
    const value = (job: string, v: string, n: number): Value => ({
      value: n,
      labels: this.second ? { job, [this.second]: v } : { job },
    });
    for (const [job, c] of this.counts) {
      out.push(value(job, c.second, c.n));
      for (const [v, n] of c.more ?? []) out.push(value(job, v, n));
    }
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
  private readonly jobs: KeyedRows<Float64Array>;
  constructor(
    name: string,
    help: string,
    registry: Registry,
    private readonly buckets: readonly number[],
  ) {
    super(name, help, registry);
    this.jobs = new KeyedRows(buckets.length + 2, (n) => new Float64Array(n));
  }
  observe(job: string, value: number): void {
    const b = this.buckets;
    const at = this.jobs.row(job);
    const h = this.jobs.data;
    let i = 0;
    while (i < b.length && value > (b[i] as number)) i++;
    if (i < b.length) h[at + i] = (h[at + i] as number) + 1;
    h[at + b.length] = (h[at + b.length] as number) + value;
    h[at + b.length + 1] = (h[at + b.length + 1] as number) + 1;
  }
  protected values(): Value[] {
    const out: Value[] = [];
    const b = this.buckets;
    const h = this.jobs.data;
    for (const [job, at] of this.jobs.offsets) {
      let cumulative = 0;
      b.forEach((le, i) => {
        cumulative += h[at + i] as number;
        out.push({
          value: cumulative,
          labels: { le: String(le), job },
          metricName: `${this.name}_bucket`,
        });
      });
      const count = h[at + b.length + 1] as number;
      out.push({ value: count, labels: { le: '+Inf', job }, metricName: `${this.name}_bucket` });
      out.push({
        value: h[at + b.length] as number,
        labels: { job },
        metricName: `${this.name}_sum`,
      });
      out.push({ value: count, labels: { job }, metricName: `${this.name}_count` });
    }
    return out;
  }
}

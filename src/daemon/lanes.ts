/**
 * The jobs' lanes (`admission/lane.ts`), one per `app/job`, and the registry they were built
 * from. A job that left the manifests keeps its lane, marked removed, until its last run has
 * ended; then the lane is dropped.
 */
import { Lane } from './admission/lane.js';
import type { RegisteredJob } from './registry.js';

/** See the module comment. */
export class Lanes {
  private readonly byKey = new Map<string, Lane>();
  private current = new Map<string, RegisteredJob>();

  /** The registry installed last, by `app/job`. */
  get registry(): ReadonlyMap<string, RegisteredJob> {
    return this.current;
  }

  /** The lane of a job in the manifests (not removed), if any. */
  live(key: string): Lane | undefined {
    const lane = this.byKey.get(key);
    return lane && !lane.removed ? lane : undefined;
  }

  /** Every lane, removed jobs' included. */
  all(): Iterable<Lane> {
    return this.byKey.values();
  }

  /** The job of a lane or of the registry (a removed job's lane still knows its job). */
  jobOf(key: string): RegisteredJob | undefined {
    return this.byKey.get(key)?.job ?? this.current.get(key);
  }

  /**
   * Installs a registry: lanes for new jobs (paused as `paused` says), the new definition for
   * kept ones; returns the lanes of jobs that left it, now marked removed.
   */
  install(registry: Map<string, RegisteredJob>, paused: ReadonlySet<string>): Lane[] {
    this.current = registry;
    for (const [key, job] of registry) {
      const lane = this.byKey.get(key);
      if (lane) {
        lane.job = job;
        lane.removed = false;
      } else this.byKey.set(key, new Lane(job, paused.has(key)));
    }
    return [...this.byKey.values()].filter((lane) => !registry.has(lane.key));
  }

  /** Forgets a removed job's lane once its last slot is released. */
  drop(lane: Lane): void {
    if (this.byKey.get(lane.key) === lane) this.byKey.delete(lane.key);
  }
}

/** Delayed manual runs (SPEC §7 `at` / `after_seconds`): held until their time on the timer. */
import { jobKey } from './registry.js';
import type { NewRun } from './store/types.js';
import type { TimerLoop } from './timer.js';

/** See the module comment. */
export class Delayed {
  private readonly runs = new Map<string, NewRun>();

  constructor(private readonly timer: TimerLoop) {}

  /** Holds a run (its row is queued with a `dueAt`) until its due time. */
  add(run: NewRun): void {
    this.runs.set(run.id, run);
    const at = run.dueAt as number;
    this.timer.push({ at, kind: 'delayed', runId: run.id, key: jobKey(run.app, run.job) });
  }

  /** Takes a run back (due, cancelled); undefined when none is held. */
  take(id: string): NewRun | undefined {
    const run = this.runs.get(id);
    this.runs.delete(id);
    return run;
  }

  /** Takes back every run of a job (removed by a reload). */
  takeJob(key: string): NewRun[] {
    const out: NewRun[] = [];
    for (const [id, run] of this.runs)
      if (jobKey(run.app, run.job) === key) {
        this.runs.delete(id);
        out.push(run);
      }
    return out;
  }
}

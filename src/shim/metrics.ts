/**
 * `--metrics-textfile DIR`: after each fire the shim writes
 * `DIR/cronix_<app>_<job>.prom` for node_exporter's textfile collector,
 * atomically (temp file in DIR, then rename), with the job's last outcome,
 * attempts, duration, last success time and fire count.
 */
import { join } from 'node:path';
import type { FireOutcome } from '../contract/run.js';
import { writeFileAtomic } from '../io/atomic.js';

const OUTCOMES: readonly FireOutcome[] = [
  'success',
  'app-rejected',
  'retries-exhausted',
  'lock-contended',
  'lock-unavailable',
  'duplicate',
  'stopped',
  'internal-error',
];

/** What one fire leaves in the textfile. */
export interface FireMetrics {
  app: string;
  job: string;
  outcome: FireOutcome;
  attempts: number;
  durationSeconds: number;
  lastSuccessMs: number | null;
  firedAtMs: number;
  fires: number;
}

const label = (v: string): string =>
  v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');

/** Renders the Prometheus text exposition of one job's last fire. */
export function renderTextfile(m: FireMetrics): string {
  const l = `app="${label(m.app)}",job="${label(m.job)}"`;
  const lines = [
    "# HELP cronix_job_last_outcome Outcome of the job's last fire on this host (1 for the outcome it had).",
    '# TYPE cronix_job_last_outcome gauge',
    ...OUTCOMES.map(
      (o) => `cronix_job_last_outcome{${l},outcome="${o}"} ${o === m.outcome ? 1 : 0}`,
    ),
    '# HELP cronix_job_last_attempts HTTP attempts made by the last fire.',
    '# TYPE cronix_job_last_attempts gauge',
    `cronix_job_last_attempts{${l}} ${m.attempts}`,
    '# HELP cronix_job_last_duration_seconds Duration of the last fire.',
    '# TYPE cronix_job_last_duration_seconds gauge',
    `cronix_job_last_duration_seconds{${l}} ${m.durationSeconds}`,
    '# HELP cronix_job_last_fire_timestamp_seconds When the last fire ran (Unix seconds).',
    '# TYPE cronix_job_last_fire_timestamp_seconds gauge',
    `cronix_job_last_fire_timestamp_seconds{${l}} ${Math.floor(m.firedAtMs / 1000)}`,
    '# HELP cronix_job_last_success_timestamp_seconds When the job last succeeded (Unix seconds; 0 = never).',
    '# TYPE cronix_job_last_success_timestamp_seconds gauge',
    `cronix_job_last_success_timestamp_seconds{${l}} ${m.lastSuccessMs === null ? 0 : Math.floor(m.lastSuccessMs / 1000)}`,
    '# HELP cronix_job_fires_total Fires of the job on this host.',
    '# TYPE cronix_job_fires_total counter',
    `cronix_job_fires_total{${l}} ${m.fires}`,
  ];
  return `${lines.join('\n')}\n`;
}

/** Writes the textfile atomically into `dir`. */
export function writeTextfile(dir: string, m: FireMetrics): string {
  const name = `cronix_${m.app}_${m.job}.prom`.replace(/-/g, '_');
  const path = join(dir, name);
  writeFileAtomic(path, renderTextfile(m));
  return path;
}

/**
 * Entry of `cronix trigger`: argument parsing (node:util parseArgs — no
 * commander on this path), settings from flags then environment, signal
 * handling, exit code. Loaded by `src/cli/main.ts` before anything else.
 */
import { hostname } from 'node:os';
import { parseArgs } from 'node:util';
import { SHIM_EXIT } from '../contract/run.js';
import { systemClock } from '../fire/clock.js';
import { ShimLogger } from './log.js';
import { trigger, type TriggerSettings } from './trigger.js';

/** Usage text of `cronix trigger --help`. */
export const TRIGGER_USAGE = `Usage: cronix trigger <app>.<job> [options]

Fire one job once: take its lock, send the signed HTTP request with retries,
and exit with a documented code. Run by the host scheduler (crontab, systemd,
Kubernetes, EventBridge) that "cronix apply" configured.

Options:
  --spec-dir DIR          job spec files (default $CRONIX_JOB_SPEC_DIR or /etc/cronix/jobs)
  --lock-dir DIR          host lock files (default $CRONIX_LOCK_DIR or /var/lock/cronix)
  --state-dir DIR         host run state (default $CRONIX_STATE_DIR or /var/lib/cronix)
  --lock-backend URL      redis://host:6379[/db] for global scope (default $CRONIX_REDIS_URL)
  --fire-time INSTANT     intended fire time, RFC 3339 or Unix seconds (default: the
                          latest scheduled instant at or before now)
  --contended-exit 4|75   exit code when the lock is held elsewhere (default 4)
  --metrics-textfile DIR  write a Prometheus textfile for node_exporter after the fire
  -h, --help              show this help

Exit codes: 0 ok (or duplicate suppressed) · 1 app rejected (4xx) · 2 retries
exhausted · 3 internal/config error · 4 lock contended · 75 temporary failure
(lock backend unreachable, or stopped by SIGTERM).

Environment: CRONIX_HOST_ID (host identity, default the hostname),
CRONIX_REDIS_PREFIX (Redis key prefix, default "cronix:").`;

/** Parses argv (after `trigger`) into settings, or returns an error message. */
export function parseTriggerArgs(
  argv: string[],
  env: NodeJS.ProcessEnv,
): TriggerSettings | { help: true } | { error: string } {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        'spec-dir': { type: 'string' },
        'lock-dir': { type: 'string' },
        'state-dir': { type: 'string' },
        'lock-backend': { type: 'string' },
        'fire-time': { type: 'string' },
        'contended-exit': { type: 'string' },
        'metrics-textfile': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    return { error: `${(err as Error).message} (run "cronix trigger --help")` };
  }
  const v = parsed.values;
  if (v.help) return { help: true };
  if (parsed.positionals.length !== 1) {
    return {
      error: `expected exactly one <app>.<job> argument, found ${parsed.positionals.length}`,
    };
  }
  const target = parsed.positionals[0] as string;
  if (!/^[a-z][a-z0-9-]{0,62}\.[a-z][a-z0-9-]{0,62}$/.test(target)) {
    return {
      error: `<app>.<job> must look like "billing.settle-invoices", found ${JSON.stringify(target)}`,
    };
  }
  const contended = v['contended-exit'] ?? '4';
  if (contended !== '4' && contended !== '75') {
    return { error: `--contended-exit must be 4 or 75, found ${JSON.stringify(contended)}` };
  }
  return {
    target,
    specDir: v['spec-dir'] ?? env['CRONIX_JOB_SPEC_DIR'] ?? '/etc/cronix/jobs',
    lockDir: v['lock-dir'] ?? env['CRONIX_LOCK_DIR'] ?? '/var/lock/cronix',
    stateDir: v['state-dir'] ?? env['CRONIX_STATE_DIR'] ?? '/var/lib/cronix',
    redisUrl: v['lock-backend'] ?? env['CRONIX_REDIS_URL'],
    redisPrefix: env['CRONIX_REDIS_PREFIX'] ?? 'cronix:',
    fireTime: v['fire-time'],
    contendedExit: contended === '75' ? 75 : 4,
    metricsDir: v['metrics-textfile'],
    hostId: env['CRONIX_HOST_ID'] || hostname(),
  };
}

/** Runs `cronix trigger` with `argv` (the arguments after `trigger`); resolves to the exit code. */
export async function main(argv: string[]): Promise<number> {
  const env = process.env;
  const logger = new ShimLogger();
  const settings = parseTriggerArgs(argv, env);
  if ('help' in settings) {
    process.stdout.write(`${TRIGGER_USAGE}\n`);
    return 0;
  }
  if ('error' in settings) {
    logger.log('error', 'internal-error', settings.error, { err: settings.error });
    return SHIM_EXIT.internal;
  }
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  try {
    return await trigger(settings, { env, clock: systemClock, logger, signal: controller.signal });
  } catch (err) {
    // last line of defence: one JSON line, no stack trace
    logger.log('error', 'internal-error', `internal error: ${(err as Error).message}`, {
      err: (err as Error).message,
    });
    return SHIM_EXIT.internal;
  }
}

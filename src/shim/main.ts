/**
 * Entry of `cronix trigger`: flags (args.ts), signals, the process limits
 * (limits.ts), the exit code. Loaded by `src/cli/main.ts` before anything
 * else, so it imports only the shim's own code.
 */
import { SHIM_EXIT } from '../contract/run.js';
import { systemClock } from '../fire/clock.js';
import type { Transport } from '../fire/types.js';
import { parseTriggerArgs, TRIGGER_USAGE } from './args.js';
import { attemptStopSeconds } from '../contract/manifest/effective.js';
import { FireLimits, fireBudgetMs, SHIM_NOTIFY_BUDGET_MS, START_BUDGET_MS } from './limits.js';
import { ShimLogger } from './log.js';
import { trigger } from './trigger.js';
import { REPORT_TIMEOUT_MS } from '../contract/report-constants.js';
import { reportChoice } from './report-config.js';

/** Where SIGTERM and SIGINT arrive: `process`, or an emitter in in-process tests. */
export interface SignalSource {
  on(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
  off(signal: 'SIGTERM' | 'SIGINT', listener: () => void): unknown;
}

/** The process around one run of {@link main}; the real one by default. */
export interface ShimProcess {
  env: NodeJS.ProcessEnv;
  /** Writes one log line (with its newline) to stdout. */
  write: (line: string) => void;
  /** Ends the process at once (a stop not honoured within the grace). */
  exit: (code: number) => void;
  signals: SignalSource;
  /** The HTTP transport (tests may inject one; default: the real client). */
  transport?: Transport;
}

const realProcess = (): ShimProcess => ({
  env: process.env,
  write: (line) => process.stdout.write(line),
  exit: (code) => process.exit(code),
  signals: process,
});

/**
 * Runs `cronix trigger` with `argv` (the arguments after `trigger`); resolves
 * to the exit code. SIGTERM/SIGINT stop the fire (exit 75); so does the
 * job's deadline. A fire that does not wind down within the grace is ended
 * through `proc.exit(75)`.
 */
export async function main(argv: string[], proc: ShimProcess = realProcess()): Promise<number> {
  const logger = new ShimLogger(proc.write);
  const settings = parseTriggerArgs(argv, proc.env);
  if ('help' in settings) {
    proc.write(`${TRIGGER_USAGE}\n`);
    return 0;
  }
  if ('error' in settings) {
    logger.log('error', 'internal-error', settings.error, { err: settings.error });
    return SHIM_EXIT.internal;
  }
  const limits = new FireLimits({
    exit: proc.exit,
    onForcedStop: (reason, graceMs) => {
      if (logger.ended) return;
      const msg = `the fire did not stop within ${graceMs / 1000}s of ${reason === 'deadline' ? 'its deadline' : 'the signal'}; exiting`;
      logger.log('warn', 'stopped', msg, { err: msg });
    },
  });
  const stop = (): void => limits.stop('signal');
  proc.signals.on('SIGTERM', stop);
  proc.signals.on('SIGINT', stop);
  limits.deadlineIn(START_BUDGET_MS);
  try {
    return await trigger(settings, {
      env: proc.env,
      clock: systemClock,
      logger,
      signal: limits.signal,
      onJob: (spec) => {
        const stopSeconds = attemptStopSeconds(spec.job);
        limits.extendStopGrace(stopSeconds * 1000);
        const notifyMs = (spec.job.notify ?? []).length > 0 ? SHIM_NOTIFY_BUDGET_MS + 1000 : 0;
        // `started` and `ended` reports (SPEC §15): at most REPORT_TIMEOUT_MS each
        const reportMs =
          reportChoice(settings.reportTo, spec) !== null ? 2 * REPORT_TIMEOUT_MS + 1000 : 0;
        limits.deadlineIn(fireBudgetMs(spec.job.policy, stopSeconds) + notifyMs + reportMs);
      },
      ...(proc.transport ? { transport: proc.transport } : {}),
    });
  } catch (err) {
    // last line of defence: one JSON line, no stack trace
    const message = err instanceof Error ? err.message : String(err);
    logger.log('error', 'internal-error', `internal error: ${message}`, { err: message });
    return SHIM_EXIT.internal;
  } finally {
    limits.dispose();
    proc.signals.off('SIGTERM', stop);
    proc.signals.off('SIGINT', stop);
  }
}

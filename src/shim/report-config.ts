/**
 * Whether and where one fire reports (SPEC §15): the URL from `--report-to`, else
 * `$CRONIX_REPORT_URL`, else the spec file's `report_to`; the secret from the spec file's
 * `report_secret_refs`, else `env:CRONIX_REPORT_SECRET`. Without a URL nothing of the reporter
 * is loaded. A bad URL or spec key turns reporting off with a warning; the fire runs as always.
 */
import { reportUrlProblem } from '../contract/report-target.js';
import type { FireFacts, FireReports } from './fire-report.js';
import type { JobSpec } from './spec.js';
import type { Clock, Transport } from '../fire/types.js';
import type { ShimLogger } from './log.js';

/** The secret ref used when the spec file names none. */
export const DEFAULT_REPORT_SECRET_REF = 'env:CRONIX_REPORT_SECRET';

/** Where one fire reports. */
export interface ReportConfig {
  url: string;
  secretRefs: string[];
}

/** The report settings of a fire: none, one, or why reporting is off. */
export type ReportChoice = { config: ReportConfig } | { problem: string } | null;

/** Chooses the report settings of a fire (`urlSetting`: `--report-to` or the environment). */
export function reportChoice(urlSetting: string | undefined, spec: JobSpec): ReportChoice {
  const url = urlSetting ?? spec.reportTo ?? undefined;
  if (url === undefined) return null;
  if (spec.reportProblem !== null) return { problem: `spec file ${spec.reportProblem}` };
  const problem = reportUrlProblem(url);
  if (problem !== null) {
    const from = urlSetting !== undefined ? '--report-to / CRONIX_REPORT_URL' : 'report_to';
    return { problem: `${from}: ${problem}` };
  }
  const secretRefs =
    spec.reportSecretRefs.length > 0 ? spec.reportSecretRefs : [DEFAULT_REPORT_SECRET_REF];
  return { config: { url, secretRefs } };
}

/**
 * The reports of one fire, or undefined when it does not report (no URL, or a problem, which
 * is logged). Loads the reporter only here.
 */
export async function openFireReports(
  s: { reportTo?: string | undefined; stateDir: string; hostId: string },
  deps: {
    env: NodeJS.ProcessEnv;
    logger: ShimLogger;
    clock: Clock;
    reportTransport?: Transport | undefined;
  },
  spec: JobSpec,
  facts: FireFacts,
): Promise<FireReports | undefined> {
  const choice = reportChoice(s.reportTo, spec);
  if (choice === null) return undefined;
  if ('problem' in choice) {
    deps.logger.log('warn', 'report', `this fire is not reported: ${choice.problem}`, {});
    return undefined;
  }
  const { FireReports } = await import('./fire-report.js');
  return new FireReports(
    facts,
    {
      url: choice.config.url,
      secretRefs: choice.config.secretRefs,
      stateDir: s.stateDir,
      host: s.hostId,
      env: deps.env,
      log: (level, msg, fields) => deps.logger.log(level, 'report', msg, fields),
      ...(deps.reportTransport ? { transport: deps.reportTransport } : {}),
    },
    spec.job.command !== undefined,
    () => deps.clock.now(),
  );
}

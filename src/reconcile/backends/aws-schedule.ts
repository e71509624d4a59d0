/**
 * What the EventBridge Scheduler backend writes for one desired entry (pure): the schedule
 * request, the target input that runs `cronix trigger`, the ownership marker kept in the
 * schedule's `Description`, and the refusals of everything EventBridge cannot honour.
 */
import { BLACKOUT_NEEDS_SERVE, RATE_NEEDS_SERVE } from './crontab.js';
import { createHash } from 'node:crypto';
import { effectivePolicy } from '../../contract/manifest/index.js';
import type { DesiredEntry } from '../backend.js';
import { entryId } from '../backend.js';
import {
  AWS_MINUTES,
  rateStartDate,
  toAwsSchedule,
  type AwsScheduleExpression,
} from './aws-cron.js';
import { refuseSecondsEntry } from './seconds.js';

/** Longest schedule name EventBridge Scheduler accepts. */
export const AWS_NAME_MAX = 64;

/** The context attribute EventBridge replaces with the fire's scheduled time (RFC 3339 UTC). */
export const SCHEDULED_TIME = '<aws.scheduler.scheduled-time>';

/** Where schedules go and what they invoke. */
export interface AwsTargetConfig {
  /** Schedule group (`--aws-schedule-group`, default `default`). */
  group: string;
  /** `--aws-target-arn`: what each fire invokes (a Lambda function, an ECS cluster…). */
  targetArn?: string;
  /** `--aws-role-arn`: the role EventBridge Scheduler assumes to invoke the target. */
  roleArn?: string;
  /** `--report-to` (SPEC §15): appended to the target input's `args`. */
  reportTo?: string;
}

/** The ownership marker: what `Description` carries for an entry we own. */
export interface AwsMarker {
  app: string;
  job: string;
  scheduleIndex: number;
  hash: string;
  /** Fingerprint of the schedule as written (see {@link scheduleSum}); detects hand edits. */
  sum: string;
}

const MARKER_RE =
  /^cronix:v1 app=([a-z][a-z0-9-]{0,62}) job=([a-z][a-z0-9-]{0,62}) index=(0|[1-9]\d{0,2}) hash=([0-9a-f]{16}) sum=([0-9a-f]{16})$/;

/** `cronix:v1 app=… job=… index=… hash=… sum=…` (well under the 512-character limit). */
export function formatMarker(m: AwsMarker): string {
  return `cronix:v1 app=${m.app} job=${m.job} index=${m.scheduleIndex} hash=${m.hash} sum=${m.sum}`;
}

/** The marker in `description`, or null when it is not exactly ours. */
export function parseMarker(description: string | undefined): AwsMarker | null {
  const m = MARKER_RE.exec(description ?? '');
  if (!m) return null;
  return {
    app: m[1] as string,
    job: m[2] as string,
    scheduleIndex: Number(m[3]),
    hash: m[4] as string,
    sum: m[5] as string,
  };
}

/**
 * The target input (JSON text) of an entry. A receiver (a Lambda handler, a container
 * entrypoint) runs `cronix <args…>`; EventBridge replaces {@link SCHEDULED_TIME} with the
 * fire's scheduled time on every invocation, so the shim's run key is the intended fire. With
 * `reportTo` (`--report-to`, SPEC §15) the args end in `--report-to <url>`.
 */
export function targetInput(
  app: string,
  job: string,
  scheduleIndex: number,
  reportTo?: string,
): string {
  const report = reportTo === undefined ? [] : ['--report-to', reportTo];
  return JSON.stringify({
    cronix: 1,
    app,
    job,
    schedule_index: scheduleIndex,
    fire_time: SCHEDULED_TIME,
    args: ['trigger', `${app}.${job}`, '--fire-time', SCHEDULED_TIME, ...report],
  });
}

/** The parts of a schedule {@link scheduleSum} covers, as EventBridge returns them. */
export interface SummedFields {
  ScheduleExpression?: string;
  ScheduleExpressionTimezone?: string;
  State?: string;
  FlexibleTimeWindow?: { Mode?: string };
  Target?: { Arn?: string; RoleArn?: string; Input?: string };
}

/** 16 hex characters of sha256 over the fields cronix sets (not `StartDate`, which moves). */
export function scheduleSum(s: SummedFields): string {
  const parts = [
    s.ScheduleExpression ?? '',
    s.ScheduleExpressionTimezone ?? '',
    s.State ?? '',
    s.FlexibleTimeWindow?.Mode ?? '',
    s.Target?.Arn ?? '',
    s.Target?.RoleArn ?? '',
    s.Target?.Input ?? '',
  ];
  return createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 16);
}

/** The body of CreateSchedule / UpdateSchedule (UpdateSchedule replaces every field). */
export interface AwsScheduleRequest {
  Name: string;
  GroupName: string;
  ScheduleExpression: string;
  ScheduleExpressionTimezone: string;
  StartDate?: Date;
  Description: string;
  State: 'ENABLED';
  FlexibleTimeWindow: { Mode: 'OFF' };
  Target: { Arn: string; RoleArn: string; Input: string };
  ActionAfterCompletion: 'NONE';
}

/**
 * The full request for `entry`, or the reason it cannot be written. `now` (epoch ms) anchors
 * `rate()` schedules on the epoch grid and starts the DST horizon.
 */
export function scheduleRequest(
  entry: DesiredEntry,
  config: AwsTargetConfig,
  now: number,
): { ok: true; request: AwsScheduleRequest } | { ok: false; reason: string } {
  const checked = check(entry, now);
  if ('reasons' in checked) return { ok: false, reason: checked.reasons.join('; ') };
  return { ok: true, request: buildRequest(entry, config, checked, now) };
}

function buildRequest(
  entry: DesiredEntry,
  config: AwsTargetConfig,
  expr: AwsScheduleExpression,
  now: number,
): AwsScheduleRequest {
  const Target = {
    Arn: config.targetArn as string,
    RoleArn: config.roleArn as string,
    Input: targetInput(entry.app, entry.job, entry.scheduleIndex, config.reportTo),
  };
  const fields = {
    ScheduleExpression: expr.expression,
    ScheduleExpressionTimezone: expr.timezone,
    State: 'ENABLED' as const,
    FlexibleTimeWindow: { Mode: 'OFF' as const },
    Target,
  };
  const marker: AwsMarker = {
    app: entry.app,
    job: entry.job,
    scheduleIndex: entry.scheduleIndex,
    hash: entry.hash,
    sum: scheduleSum(fields),
  };
  return {
    Name: entry.id,
    GroupName: config.group,
    ...fields,
    ...(expr.rateSeconds !== undefined ? { StartDate: rateStartDate(expr.rateSeconds, now) } : {}),
    Description: formatMarker(marker),
    ActionAfterCompletion: 'NONE',
  };
}

const ALTERNATIVE = 'run this job under cronix serve (the daemon) instead';

/**
 * Every reason EventBridge Scheduler cannot run `entry` faithfully (empty when it can). Covers
 * the name limit, the schedule translation (day rules, steps, `@every` granularity, DST
 * differences) and the §8 extensions the shim cannot honour on its own. (Missing target flags
 * are the backend's configuration error, not a property of the entry.)
 */
export function refuseEntry(entry: DesiredEntry, now: number): string[] {
  const checked = check(entry, now);
  return 'reasons' in checked ? checked.reasons : [];
}

function check(entry: DesiredEntry, now: number): AwsScheduleExpression | { reasons: string[] } {
  const reasons: string[] = [];
  const refuse = (reason: string): void => void reasons.push(reason);
  if (entry.spec.policy.rate !== undefined) refuse(RATE_NEEDS_SERVE);
  if (entry.spec.policy.blackout !== undefined) refuse(BLACKOUT_NEEDS_SERVE);
  const name = entryId(entry.app, entry.job, entry.scheduleIndex);
  if (name.length > AWS_NAME_MAX) {
    refuse(
      `schedule name "${name}" is ${name.length} characters; EventBridge Scheduler allows ${AWS_NAME_MAX}. Shorten the app or job name (app + job at most ${AWS_NAME_MAX - 9 - String(entry.scheduleIndex).length} characters together)`,
    );
  }
  const seconds = refuseSecondsEntry(entry, AWS_MINUTES);
  if (seconds !== null) refuse(seconds);
  if (entry.spec.command !== undefined) {
    refuse(
      `job ${entry.job} is a command job: EventBridge Scheduler has no host to run a command on (its target is an AWS API such as Lambda or ECS, which would need cronix and the program inside it). Run it with --backend crontab, systemd or kubernetes, or ${ALTERNATIVE}`,
    );
  }
  const policy = effectivePolicy(entry.spec);
  if (policy.concurrency === 'Enqueue') {
    refuse(
      `policy.concurrency "Enqueue" needs a queue, which only cronix serve keeps; EventBridge Scheduler fires the shim, which cannot queue. Use Forbid, Replace or Allow, or ${ALTERNATIVE}`,
    );
  }
  if (policy.concurrency !== 'Allow' && policy.max_concurrent > 1) {
    refuse(
      `policy.max_concurrent ${policy.max_concurrent}: the trigger shim's lock admits one run at a time. Use max_concurrent 1, or ${ALTERNATIVE}`,
    );
  }
  if (policy.jitter.stable_seconds > 0 || policy.jitter.random_seconds > 0) {
    refuse(
      `policy.jitter: EventBridge Scheduler fires at the scheduled minute (cronix sets FlexibleTimeWindow OFF) and the shim adds no delay. Remove jitter, or ${ALTERNATIVE}`,
    );
  }
  if (policy.catchup.mode === 'all') {
    refuse(
      `policy.catchup.mode "all": EventBridge Scheduler does not replay missed fires. Use "latest" or "none", or ${ALTERNATIVE}`,
    );
  }
  // a seconds schedule has no translation: its own reason says all about the schedule
  const translated =
    seconds === null ? toAwsSchedule(entry.schedule, entry.spec.timezone, now) : null;
  if (translated !== null && !translated.ok) refuse(translated.reason);
  if (reasons.length > 0 || translated === null || !translated.ok) return { reasons };
  return translated.value;
}

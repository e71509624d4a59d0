/**
 * What a notification says (SPEC §12): the JSON body of a webhook — `{event, app, job, run,
 * count, text}` — and the subject and body of a mail. `text` is one human line that Slack and
 * Mattermost incoming webhooks display as it is. Pure; never holds a secret (a run's `error`
 * is already secret-free, SPEC §9 item 7).
 */
import type { NotifyEvent } from '../contract/manifest/types.js';

/** The run a notification is about, in the API's field names (times RFC 3339 UTC or null). */
export interface NotifyRun {
  id: string;
  run_key: string;
  trigger: string;
  scheduled_time: string;
  started_at: string | null;
  ended_at: string | null;
  outcome: string | null;
  attempts: number;
  last_status: number | null;
  error: string | null;
}

/** The webhook body. */
export interface NotifyPayload {
  event: NotifyEvent;
  app: string;
  job: string;
  run: NotifyRun;
  count: number;
  text: string;
}

/** The run fields a message is built from (a subset of a ledger row; times epoch ms). */
export interface RunFacts {
  id: string;
  runKey: string;
  trigger: string;
  scheduledTime: number;
  startedAt: number | null;
  endedAt: number | null;
  outcome: string | null;
  attempts: number;
  lastStatus: number | null;
  error: string | null;
}

const iso = (ms: number | null): string | null =>
  ms === null ? null : new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Collapses whitespace so `text` stays one line, and caps its length. */
function oneLine(text: string, max = 400): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat;
}

/** The one line of a notification. */
export function notifyText(
  event: NotifyEvent,
  app: string,
  job: string,
  run: RunFacts,
  count: number,
  extra: { slowAfterSeconds?: number } = {},
): string {
  const name = `${app}/${job}`;
  const since = count > 1 ? ` (${count} times since the last message)` : '';
  switch (event) {
    case 'failed':
      return oneLine(
        `cronix: ${name} failed: ${run.outcome ?? 'failed'}` +
          `${run.error ? ` (${run.error})` : ''}${since}; run ${run.id}`,
      );
    case 'missed':
      return oneLine(
        `cronix: ${name} missed the fire of ${iso(run.scheduledTime)}` +
          `${run.error ? ` (${run.error})` : ''}${since}`,
      );
    case 'recovered':
      return oneLine(
        `cronix: ${name} recovered: run ${run.id} succeeded` +
          (count > 0 ? ` after ${count} failed or missed fire(s)` : ''),
      );
    case 'slow':
      return oneLine(
        `cronix: ${name} is slow: run ${run.id} still running after ${extra.slowAfterSeconds ?? '?'} s` +
          ` (started ${iso(run.startedAt ?? run.scheduledTime)})`,
      );
  }
}

/** The webhook body of a notification. */
export function notifyPayload(
  event: NotifyEvent,
  app: string,
  job: string,
  run: RunFacts,
  count: number,
  extra: { slowAfterSeconds?: number } = {},
): NotifyPayload {
  return {
    event,
    app,
    job,
    run: {
      id: run.id,
      run_key: run.runKey,
      trigger: run.trigger,
      scheduled_time: iso(run.scheduledTime) as string,
      started_at: iso(run.startedAt),
      ended_at: iso(run.endedAt),
      outcome: run.outcome,
      attempts: run.attempts,
      last_status: run.lastStatus,
      error: run.error,
    },
    count,
    text: notifyText(event, app, job, run, count, extra),
  };
}

/** A plain-text mail of a notification: the line as the subject, the details in the body. */
export function notifyMail(payload: NotifyPayload): { subject: string; text: string } {
  const r = payload.run;
  const lines = [
    payload.text,
    '',
    `event:          ${payload.event}`,
    `job:            ${payload.app}/${payload.job}`,
    `count:          ${payload.count}`,
    `run:            ${r.id}`,
    `run key:        ${r.run_key}`,
    `trigger:        ${r.trigger}`,
    `scheduled time: ${r.scheduled_time}`,
    `started at:     ${r.started_at ?? '-'}`,
    `ended at:       ${r.ended_at ?? '-'}`,
    `outcome:        ${r.outcome ?? '-'}`,
    `attempts:       ${r.attempts}`,
    `last status:    ${r.last_status ?? '-'}`,
    `error:          ${r.error ?? '-'}`,
    '',
  ];
  return { subject: oneLine(payload.text, 200), text: lines.join('\n') };
}

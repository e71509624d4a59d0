/**
 * `cronix skip <app/job> --next | --at T` (SPEC §16 "Calendars"): an API client. The skipped
 * fire is recorded `skipped` with reason `skip: by <who>` when it comes.
 * Exit codes: 0 ok (skipped now, or already), 1 error (no such job, not a fire of the job, the
 * fire already decided), 2 usage.
 */
import { parseInstant, rfc3339Utc } from '../../contract/run.js';
import { EXIT } from '../output.js';
import { call, jobOf, print, type ClientOptions, type Row } from './client.js';

function usage(msg: string): number {
  process.stderr.write(`error: ${msg}\n`);
  return EXIT.usage;
}

/** `cronix skip <app/job> (--next | --at T)`. */
export async function skipCommand(
  text: string,
  f: { next?: boolean; at?: string },
  o: ClientOptions,
): Promise<number> {
  const t = jobOf('the job', text);
  if (!t) return EXIT.usage;
  if (f.next === true && f.at !== undefined) return usage('give one of --next and --at, not both');
  let body: { next: true } | { at: string };
  if (f.at !== undefined) {
    const at = parseInstant(f.at);
    if (at === null)
      return usage(
        `--at: expected an RFC 3339 instant or Unix seconds, found ${JSON.stringify(f.at.slice(0, 80))}`,
      );
    body = { at: rfc3339Utc(at) };
  } else if (f.next === true) body = { next: true };
  else return usage('give --next (the next fire) or --at <instant> (one fire)');
  const json = await call(o, 'POST', `/api/v1/jobs/${t.app}/${t.job}/skip`, body);
  if (!json) return EXIT.error;
  const s = json['skip'] as Row;
  return print(
    o,
    json,
    [
      {
        job: `${String(s['app'])}/${String(s['job'])}`,
        ...s,
        new: json['created'] === true ? 'yes' : 'no (already skipped)',
      },
    ],
    ['job', 'at', 'by', 'since', 'new'],
  );
}

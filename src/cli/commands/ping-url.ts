/**
 * `cronix ping-url <app>/<job> (or <app>.<job>) --server URL --report-secret-ref REF [-o json]` (SPEC §15): the
 * URL a cron line or CI job that does not run the shim pings, with the job's ping token (derived
 * from the report secret, see `src/contract/ping.ts`), and the `curl` suffix to append. Exit 0,
 * 1 when the secret does not resolve, 2 usage.
 */
import { pingUrl } from '../../contract/ping.js';
import { parseJobName } from '../../contract/run.js';
import { refForDisplay, resolveSecretRefs } from '../../secrets/resolve.js';
import { EXIT, printJson, printLines, type OutputFormat } from '../output.js';

/** Options as commander hands them over. */
export interface PingUrlOptions {
  server: string;
  reportSecretRef: string;
  output: OutputFormat;
}

/** Prints the ping URL; returns the exit code. */
export function pingUrlCommand(target: string, o: PingUrlOptions, env = process.env): number {
  const named = parseJobName(target);
  if (named === null) {
    process.stderr.write(
      `error: <app>/<job>: expected an app and a job name such as billing/settle (or billing.settle), found ${JSON.stringify(target.slice(0, 200))}\n`,
    );
    return EXIT.usage;
  }
  const { app, job } = named;
  let base: URL;
  try {
    base = new URL(o.server);
    if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new Error('scheme');
  } catch {
    process.stderr.write(
      `error: --server: expected the server's base URL (https://cron.example.com), found ${JSON.stringify(o.server.slice(0, 200))}\n`,
    );
    return EXIT.usage;
  }
  const resolved = resolveSecretRefs([o.reportSecretRef], { env });
  const secret = resolved.secrets[0];
  if (secret === undefined) {
    const why = resolved.unresolved[0]?.reason ?? 'not resolved';
    process.stderr.write(
      `error: --report-secret-ref ${refForDisplay(o.reportSecretRef)}: ${why}\n`,
    );
    return EXIT.error;
  }
  const url = pingUrl(base.href, app, job, secret);
  const curl = `curl -fsS -m 5 --retry 3 -X POST '${url}' >/dev/null`;
  if (o.output === 'json')
    printJson({ app, job, url, start_url: url.replace('?', '/start?'), curl });
  else printLines([url, '', `append to the cron line: && ${curl}`]);
  return EXIT.ok;
}

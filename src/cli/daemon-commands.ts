/**
 * Registers the daemon's commands (`serve`, `reload`, and the API clients `jobs`, `runs`,
 * `logs`, `start`, `cancel`, `pause`, `resume`, `replay`) on the CLI program.
 */
import type { Command } from 'commander';
import { client, out, tokenFile, url, type ClientFlags } from './client-options.js';
import type { SsoFlags } from './commands/sso-options.js';
import { outputFormat } from './output.js';

/** Adds the daemon commands to `program`. */
export function registerDaemonCommands(program: Command): void {
  program
    .command('serve')
    .description(
      "run the scheduler daemon: fire the manifests' jobs, keep a durable ledger, serve the API and metrics",
    )
    .argument('[manifests...]', 'manifest files')
    .option('--data-dir <dir>', 'ledger and token directory', './.cronix')
    .option('--listen <host:port>', 'HTTP API address', '127.0.0.1:7070')
    .option(
      '--log-format <format>',
      'pretty (one human line per event) or json (one JSON object per line); default pretty on a terminal, json otherwise',
    )
    .option(
      '--token-file <file>',
      'API bearer token, a private file (mode 0600; default: generated into the data dir at first start)',
    )
    .option('--no-auth', 'no token for the API (loopback addresses only)')
    .option(
      '--public-url <url>',
      'the address users reach this daemon at (https://cron.example.com): its host is a Host served',
    )
    .option(
      '--allowed-host <host>',
      'another Host name served besides loopback and the listen address (host or host:port; repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--metrics-auth', '/metrics needs the API token too (default: open)')
    .option('--max-event-streams <n>', 'event streams (the live UI) open at once', '500')
    .option(
      '--max-event-streams-per-client <n>',
      'event streams open at once per client address',
      '32',
    )
    .option('--grace-period <seconds>', 'on SIGTERM, how long running attempts may finish', '30')
    .option('--retention-days <days>', 'delete ended runs older than this (0 = keep forever)', '30')
    .option(
      '--store <url>',
      'postgres://user@host:5432/db?schema=NAME: a PostgreSQL store shared by replicas (default $CRONIX_STORE_URL, else SQLite in the data dir)',
    )
    .option('--replica-id <id>', "this replica's name in a cluster (default <host>:<pid>)")
    .option('--lease-seconds <seconds>', 'leader lease TTL in a cluster', '15')
    .option(
      '--lock-backend <url>',
      'redis://host:6379[/db] lock backend of concurrency_scope global jobs (default $CRONIX_REDIS_URL)',
    )
    .option('--oidc-issuer <url>', 'single sign-on for the web UI: the OpenID Connect provider')
    .option('--oidc-client-id <id>', "this daemon's client id at the provider")
    .option(
      '--oidc-client-secret-ref <ref>',
      'its client secret (env:NAME or file:PATH); none: PKCE alone',
    )
    .option(
      '--oidc-role-claim <claim>',
      'the ID token claim whose values give the role (e.g. groups)',
    )
    .option(
      '--oidc-role-map <value=role>',
      'a claim value and its role: viewer, operator or admin (repeatable)',
      (v: string, p: string[]) => [...p, v],
      [] as string[],
    )
    .option(
      '--watch <path>',
      'a manifest file or directory of jobs fired by host schedulers: expected, never fired; their reports are recorded and missing fires detected (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--report-secret-ref <ref>',
      'the secret reports and pings are signed with (env:NAME, file:/path; repeatable for rotation, the first signs ping tokens)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option(
      '--init-ledger',
      'start an empty ledger although the data dir had one that is now missing, empty or replaced',
    )
    .action(
      async (
        manifests: string[],
        o: {
          dataDir: string;
          listen: string;
          tokenFile?: string;
          auth: boolean;
          publicUrl?: string;
          allowedHost?: string[];
          metricsAuth?: boolean;
          maxEventStreams: string;
          maxEventStreamsPerClient: string;
          gracePeriod: string;
          retentionDays: string;
          lockBackend?: string;
          store?: string;
          replicaId?: string;
          leaseSeconds: string;
          logFormat?: string;
          initLedger?: boolean;
          watch?: string[];
          reportSecretRef?: string[];
        } & SsoFlags,
      ) => {
        const { serveCommand } = await import('./commands/serve.js');
        process.exitCode = await serveCommand(manifests, o);
      },
    );

  program
    .command('reload')
    .description(
      'make the cronix serve of a data dir reload its manifests (SIGHUP to the pid in <data-dir>/serve.holder); exit 0 sent, 1 no daemon there',
    )
    .option('--data-dir <dir>', 'the data dir the daemon was started with', './.cronix')
    .addOption(out())
    .action(async (f: { dataDir: string; output: string }) => {
      const { reloadCommand } = await import('./commands/reload.js');
      process.exitCode = await reloadCommand({
        dataDir: f.dataDir,
        output: outputFormat(f.output),
      });
    });

  program
    .command('jobs')
    .description("list the daemon's jobs with next fire and state")
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(async (f: ClientFlags) => {
      const { jobsCommand } = await import('./commands/client.js');
      process.exitCode = await jobsCommand(client(f));
    });

  program
    .command('runs')
    .description('list runs, newest first; with a run id, show that run and its attempts')
    .argument('[run-id]', 'show one run with every attempt and its error')
    .option('--job <app/job>', 'only this job (app/job or app.job)')
    .option(
      '--outcome <outcome>',
      'only these outcomes: one (success, app_rejected, skipped, …), several separated by commas, or failed (app_rejected, retries_exhausted, crashed, internal_error)',
    )
    .option('--limit <n>', 'at most n runs (1..1000)')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(
      async (
        id: string | undefined,
        f: ClientFlags & { job?: string; outcome?: string; limit?: string },
      ) => {
        const { runCommand, runsCommand } = await import('./commands/client.js');
        if (id !== undefined) {
          process.exitCode = await runCommand(id, client(f));
          return;
        }
        process.exitCode = await runsCommand({
          ...client(f),
          ...(f.job ? { job: f.job } : {}),
          ...(f.outcome ? { outcome: f.outcome } : {}),
          ...(f.limit ? { limit: f.limit } : {}),
        });
      },
    );

  program
    .command('notifications')
    .description(
      'list notifications (failed, missed, recovered, slow), newest first, with their delivery',
    )
    .option('--job <app/job>', 'only this job (app/job or app.job)')
    .option('--event <event>', 'only this event (failed, missed, recovered, slow)')
    .option('--status <status>', 'only this delivery status (pending, delivered, failed)')
    .option('--limit <n>', 'at most n notifications (1..1000)')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(
      async (
        f: ClientFlags & { job?: string; event?: string; status?: string; limit?: string },
      ) => {
        const { notificationsCommand } = await import('./commands/client.js');
        process.exitCode = await notificationsCommand({
          ...client(f),
          ...(f.job ? { job: f.job } : {}),
          ...(f.event ? { event: f.event } : {}),
          ...(f.status ? { status: f.status } : {}),
          ...(f.limit ? { limit: f.limit } : {}),
        });
      },
    );

  program
    .command('logs')
    .description(
      "print a command run's captured output, or a service instance's (app/service); -f follows it",
    )
    .argument('<run-id|app/service>', 'run id, or a service as app/service (its --instance)')
    .option('-f, --follow', 'keep printing new output until the run ends (a service: every start)')
    .option('--instance <i>', 'the instance of a service (default 0)')
    .option(
      '--raw',
      'write the output byte for byte (default: control characters such as ESC shown as \\xHH)',
    )
    .addOption(url())
    .addOption(tokenFile())
    .action(
      async (
        id: string,
        f: { follow?: boolean; raw?: boolean; url?: string; tokenFile?: string; instance?: string },
      ) => {
        const options = {
          follow: f.follow === true,
          raw: f.raw === true,
          ...(f.url ? { url: f.url } : {}),
          ...(f.tokenFile ? { tokenFile: f.tokenFile } : {}),
        };
        // a service is named app/service (SPEC §17); anything else is a run id, which the
        // daemon answers for (404 naming it when there is no such run)
        if (id.includes('/')) {
          const { serviceLogsCommand } = await import('./commands/services.js');
          process.exitCode = await serviceLogsCommand(id, {
            ...options,
            ...(f.instance !== undefined ? { instance: f.instance } : {}),
          });
          return;
        }
        const { logsCommand } = await import('./commands/logs.js');
        process.exitCode = await logsCommand(id, options);
      },
    );

  program
    .command('services')
    .description(
      'list supervised services and their instances, or start, stop or restart one (SPEC §17)',
    )
    .argument('[action]', 'start, stop or restart (nothing: list)')
    .argument('[app/service]', 'the service, e.g. shop/worker (app.service works too)')
    .option('--instance <i>', 'only this instance (default: all, restarts one at a time)')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(
      async (
        action: string | undefined,
        target: string | undefined,
        f: ClientFlags & { instance?: string },
      ) => {
        const { servicesCommand } = await import('./commands/services.js');
        process.exitCode = await servicesCommand(action, target, {
          ...client(f),
          ...(f.instance !== undefined ? { instance: f.instance } : {}),
        });
      },
    );

  program
    .command('start')
    .description('trigger a run now, at an instant, or after a delay')
    .argument('<app/job>', 'the job, e.g. billing/settle-invoices (app.job works too)')
    .option('--at <instant>', 'when: an RFC 3339 instant (2026-03-08T07:00:00Z) or Unix seconds')
    .option(
      '--after <delay>',
      'delay written as in @every: 90s, 5m, 1h30m, 2h (plain digits: seconds)',
    )
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(async (t: string, f: ClientFlags & { at?: string; after?: string }) => {
      const { startCommand } = await import('./commands/client.js');
      process.exitCode = await startCommand(t, {
        ...client(f),
        ...(f.at ? { at: f.at } : {}),
        ...(f.after ? { after: f.after } : {}),
      });
    });

  for (const action of ['cancel', 'replay'] as const) {
    program
      .command(action)
      .description(
        action === 'cancel'
          ? 'cancel a queued, delayed or running run'
          : 'start a new run for an ended one',
      )
      .argument('<run-id>', 'run id')
      .addOption(out())
      .addOption(url())
      .addOption(tokenFile())
      .action(async (id: string, f: ClientFlags) => {
        const { runActionCommand } = await import('./commands/client.js');
        process.exitCode = await runActionCommand(action, id, client(f));
      });
  }

  for (const action of ['pause', 'resume'] as const) {
    const cmd = program
      .command(action)
      .description(
        action === 'pause'
          ? 'stop scheduled fires of a job (manual triggers still work)'
          : 'resume scheduled fires of a job',
      )
      .argument('<app/job>', 'the job, e.g. billing/settle-invoices (app.job works too)');
    if (action === 'pause') cmd.option('--reason <text>', 'why (shown with who paused it)');
    cmd
      .addOption(out())
      .addOption(url())
      .addOption(tokenFile())
      .action(async (t: string, f: ClientFlags & { reason?: string }) => {
        const { pauseCommand } = await import('./commands/client.js');
        process.exitCode = await pauseCommand(action, t, client(f), f.reason);
      });
  }
}

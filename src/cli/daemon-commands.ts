/**
 * Registers the daemon's commands (`serve`, and the API clients `jobs`, `runs`,
 * `logs`, `start`, `cancel`, `pause`, `resume`, `replay`) on the CLI program.
 */
import { Option, type Command } from 'commander';
import { outputFormat } from './output.js';

const out = (): Option =>
  new Option('-o, --output <format>', 'output format: table or json').default('table');
const url = (): Option =>
  new Option('--url <url>', 'daemon URL (default $CRONIX_URL or http://127.0.0.1:7070)');
const tokenFile = (): Option =>
  new Option('--token-file <file>', 'API token file (default $CRONIX_TOKEN, else .cronix/token)');

interface ClientFlags {
  output: string;
  url?: string;
  tokenFile?: string;
}
const client = (f: ClientFlags) => ({
  output: outputFormat(f.output),
  ...(f.url ? { url: f.url } : {}),
  ...(f.tokenFile ? { tokenFile: f.tokenFile } : {}),
});

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
      'bearer token for mutations (default: generated into the data dir at first start, mode 0600)',
    )
    .option('--no-auth', 'no token for mutations (loopback addresses only)')
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
    .action(
      async (
        manifests: string[],
        o: {
          dataDir: string;
          listen: string;
          tokenFile?: string;
          auth: boolean;
          gracePeriod: string;
          retentionDays: string;
          lockBackend?: string;
          store?: string;
          replicaId?: string;
          leaseSeconds: string;
          logFormat?: string;
        },
      ) => {
        const { serveCommand } = await import('./commands/serve.js');
        process.exitCode = await serveCommand(manifests, o);
      },
    );

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
    .option('--job <app.job>', 'only this job')
    .option('--outcome <outcome>', 'only this outcome (success, app_rejected, skipped, …)')
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
    .option('--job <app.job>', 'only this job')
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
    .description("print a command run's captured output; -f follows it until the run ends")
    .argument('<run-id>', 'run id')
    .option('-f, --follow', 'keep printing new output until the run ends')
    .addOption(url())
    .addOption(tokenFile())
    .action(async (id: string, f: { follow?: boolean; url?: string; tokenFile?: string }) => {
      const { logsCommand } = await import('./commands/logs.js');
      process.exitCode = await logsCommand(id, {
        follow: f.follow === true,
        ...(f.url ? { url: f.url } : {}),
        ...(f.tokenFile ? { tokenFile: f.tokenFile } : {}),
      });
    });

  program
    .command('start')
    .description('trigger a run now, at an instant, or after a delay')
    .argument('<app.job>', 'the job')
    .option('--at <instant>', 'RFC 3339 instant')
    .option('--after <delay>', 'delay such as 90s, 5m, 2h')
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
    program
      .command(action)
      .description(
        action === 'pause'
          ? 'stop scheduled fires of a job (manual triggers still work)'
          : 'resume scheduled fires of a job',
      )
      .argument('<app.job>', 'the job')
      .addOption(out())
      .addOption(url())
      .addOption(tokenFile())
      .action(async (t: string, f: ClientFlags) => {
        const { pauseCommand } = await import('./commands/client.js');
        process.exitCode = await pauseCommand(action, t, client(f));
      });
  }
}

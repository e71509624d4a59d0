/**
 * Registers the operator tools' commands (SPEC §16) on the CLI program: `backfill`,
 * `backfills`, `cancel-backfill`, `dead-letters`, `replay-dead-letters`, `dismiss-dead-letters`,
 * `freeze`, `unfreeze`, `freezes`, `skip`. API clients like the daemon commands (`daemon-commands.ts`).
 */
import type { Command } from 'commander';
import { client, out, tokenFile, url, type ClientFlags } from './client-options.js';

/** Adds the operator tools' commands to `program`. */
export function registerRunbookCommands(program: Command): void {
  program
    .command('backfill')
    .description(
      "run a job's schedule instants in [--from, --to) now, in order (trigger backfill); keys that succeeded are left out; exit 0 ok, 1 error (with --wait: it did not end done), 2 usage",
    )
    .argument('<app/job>', 'the job, e.g. billing/settle-invoices (app.job works too)')
    .option('--from <instant>', 'first instant included: RFC 3339 or Unix seconds')
    .option('--to <instant>', 'end of the range, excluded: RFC 3339 or Unix seconds')
    .option(
      '--only-missing',
      'also leave out instants that have any ended run that ran (failed ones too)',
    )
    .option(
      '--parallel <n>',
      "at most n runs at once (1..1024, default 1; the job's max_concurrent still applies)",
    )
    .option('--stop-after-failures <k>', 'stop the backfill after k failed runs')
    .option('--dry-run', 'print the run keys it would run, record nothing')
    .option('--wait', 'follow its progress until it ends')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(
      async (
        t: string,
        f: ClientFlags & {
          from?: string;
          to?: string;
          onlyMissing?: boolean;
          parallel?: string;
          stopAfterFailures?: string;
          dryRun?: boolean;
          wait?: boolean;
        },
      ) => {
        const { backfillCommand } = await import('./commands/backfill.js');
        process.exitCode = await backfillCommand(t, f, client(f));
      },
    );

  program
    .command('backfills')
    .description(
      'list backfills with their progress, newest first; with an id, that one and its plan',
    )
    .argument('[id]', 'show one backfill and each of its instants')
    .option('--job <app/job>', 'only this job')
    .option('--state <state>', 'only this state: running, done, stopped, cancelled')
    .option('--limit <n>', 'at most n backfills (1..1000)')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(
      async (
        id: string | undefined,
        f: ClientFlags & { job?: string; state?: string; limit?: string },
      ) => {
        const { backfillsCommand } = await import('./commands/backfill.js');
        process.exitCode = await backfillsCommand(id, f, client(f));
      },
    );

  program
    .command('cancel-backfill')
    .description('cancel a running backfill: nothing more is started, its runs in flight finish')
    .argument('<id>', 'backfill id')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(async (id: string, f: ClientFlags) => {
      const { cancelBackfillCommand } = await import('./commands/backfill.js');
      process.exitCode = await cancelBackfillCommand(id, client(f));
    });

  const filters = (c: Command): Command =>
    c
      .option('--app <app>', "only this app's jobs (what a token limited to apps may replay)")
      .option('--job <app/job>', 'only this job')
      .option(
        '--outcome <outcome>',
        'only these failed outcomes: app_rejected, retries_exhausted, crashed, internal_error (comma separated)',
      )
      .option('--from <instant>', 'scheduled at or after this instant (RFC 3339 or Unix seconds)')
      .option('--to <instant>', 'scheduled before this instant (RFC 3339 or Unix seconds)');

  filters(
    program
      .command('dead-letters')
      .description(
        'runs that ended failed and whose run key has not succeeded since, newest first, with the count per job',
      ),
  )
    .option('--limit <n>', 'at most n (1..1000)')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(
      async (
        f: ClientFlags & {
          app?: string;
          job?: string;
          outcome?: string;
          from?: string;
          to?: string;
          limit?: string;
        },
      ) => {
        const { deadLettersCommand } = await import('./commands/dead-letters.js');
        process.exitCode = await deadLettersCommand(f, client(f));
      },
    );

  filters(
    program
      .command('replay-dead-letters')
      .description(
        "replay the dead letters the filter selects, oldest first, at most --max (default 10); each through its job's lane; exit 1 when one could not be replayed",
      ),
  )
    .option('--max <n>', 'at most n dead letters (1..1000, default 10)')
    .option('--dry-run', 'list the dead letters it would replay')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(
      async (
        f: ClientFlags & {
          app?: string;
          job?: string;
          outcome?: string;
          from?: string;
          to?: string;
          max?: string;
          dryRun?: boolean;
        },
      ) => {
        const { replayDeadLettersCommand } = await import('./commands/dead-letters.js');
        process.exitCode = await replayDeadLettersCommand(f, client(f));
      },
    );

  program
    .command('dismiss-dead-letters')
    .description('take dead letters out of the view with a note; the runs stay in the ledger')
    .argument('<run-ids...>', 'the dead letters (run ids)')
    .option('--note <text>', 'why (required)')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(async (ids: string[], f: ClientFlags & { note?: string }) => {
      const { dismissDeadLettersCommand } = await import('./commands/dead-letters.js');
      process.exitCode = await dismissDeadLettersCommand(ids, f, client(f));
    });

  program
    .command('freeze')
    .description(
      'stop every new run (scheduled, catch-up, manual, queued, replay, backfill) of every job, an app or a job; runs in flight finish; exit 0 ok, 1 error, 2 usage',
    )
    .option('--app <app>', 'only this app')
    .option('--job <job>', 'only this job (with --app), or app/job')
    .option('--reason <text>', 'why (required; shown with who froze it)')
    .option('--until <instant>', 'end the freeze by itself then (RFC 3339 or Unix seconds)')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(
      async (f: ClientFlags & { app?: string; job?: string; reason?: string; until?: string }) => {
        const { freezeCommand } = await import('./commands/freeze.js');
        process.exitCode = await freezeCommand(f, client(f));
      },
    );

  program
    .command('unfreeze')
    .description(
      'end the freeze of exactly this scope (none given: the freeze of every job); its fires missed meanwhile go through the catch-up policy',
    )
    .option('--app <app>', 'the app of the freeze')
    .option('--job <job>', 'the job of the freeze (with --app), or app/job')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(async (f: ClientFlags & { app?: string; job?: string }) => {
      const { unfreezeCommand } = await import('./commands/freeze.js');
      process.exitCode = await unfreezeCommand(f, client(f));
    });

  program
    .command('freezes')
    .description('the freezes in force: scope, reason, who, since, until')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(async (f: ClientFlags) => {
      const { freezesCommand } = await import('./commands/freeze.js');
      process.exitCode = await freezesCommand(client(f));
    });

  program
    .command('skip')
    .description(
      "skip one fire of a job: it is recorded skipped (reason 'skip: by <who>') when it comes, caught up or not; manual runs are not affected; exit 0 ok (also when already skipped), 1 error, 2 usage",
    )
    .argument('<app/job>', 'the job, e.g. billing/settle-invoices (app.job works too)')
    .option('--next', "the job's next fire")
    .option('--at <instant>', 'one future fire of the job: RFC 3339 or Unix seconds')
    .addOption(out())
    .addOption(url())
    .addOption(tokenFile())
    .action(async (t: string, f: ClientFlags & { next?: boolean; at?: string }) => {
      const { skipCommand } = await import('./commands/skip.js');
      process.exitCode = await skipCommand(t, f, client(f));
    });
}

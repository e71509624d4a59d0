/**
 * The `cronix` command line (every command but `trigger`, which `main.ts`
 * routes to the shim before this file is loaded). Argument parsing only:
 * every command lives in `commands/` and is imported lazily.
 */
import { createRequire } from 'node:module';
import { Command, CommanderError, Option } from 'commander';
import type { ImportFlags } from './commands/import.js';
import { registerDaemonCommands } from './daemon-commands.js';
import { registerAccessCommands } from './access-commands.js';
import { registerRunbookCommands } from './runbook-commands.js';
import { EXIT, UsageError, outputFormat } from './output.js';
import { registerReconcileCommands } from './reconcile-commands.js';

const pkg = createRequire(import.meta.url)('../../package.json') as { version: string };

const outputOption = (): Option =>
  new Option('-o, --output <format>', 'output format: table or json').default('table');

function build(): Command {
  const program = new Command('cronix')
    .description(
      'Run periodic jobs across one host or a fleet without double-running or silently missing them.',
    )
    .version(pkg.version, '-V, --version', 'print the version')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  program
    .command('validate')
    .description('validate a manifest file; exit 0 valid, 1 invalid, 2 usage')
    .argument('<file>', 'manifest file (JSON)')
    .addOption(outputOption())
    .action(async (file: string, opts: { output: string }) => {
      const { validateCommand } = await import('./commands/validate.js');
      process.exitCode = await validateCommand(file, outputFormat(opts.output));
    });

  program
    .command('next')
    .description('print the next fire instants of a schedule')
    .argument(
      '<schedule>',
      'cron expression (5 fields, or 6 with seconds first), shortcut or @every (quote it)',
    )
    .option('--tz <zone>', 'IANA time zone whose wall clock decides matching', 'UTC')
    .option('--from <instant>', 'reference instant, RFC 3339 or Unix seconds (default: now)')
    .option('-n, --count <count>', 'how many fires to print', '1')
    .addOption(outputOption())
    .action(
      async (
        schedule: string,
        opts: { tz: string; from?: string; count: string; output: string },
      ) => {
        const { nextCommand } = await import('./commands/next.js');
        const format = outputFormat(opts.output);
        process.exitCode = nextCommand(
          schedule,
          { tz: opts.tz, from: opts.from, n: opts.count, output: format },
          Date.now(),
        );
      },
    );

  const collect = (value: string, previous: string[]): string[] => [...previous, value];
  program
    .command('import')
    .description('turn an existing schedule into a manifest (see docs/import.md)')
    .command('crontab')
    .description(
      'print a manifest for a crontab (stdout) and a verdict per line (stderr); exit 0, 1 nothing importable or unreadable, 2 usage',
    )
    .argument('[file]', "crontab file, or - for stdin (default: the invoking user's crontab)")
    .option(
      '--system',
      'system format (a user field after the schedule); default for /etc/crontab and /etc/cron.d/*',
    )
    .option('--app <name>', 'app name of the manifest (default: the file name, or "crontab")')
    .option(
      '--cron-timezone <zone>',
      "the cron daemon's zone, for lines before any CRON_TZ (default: detected)",
    )
    .option('--secret-ref <ref>', 'secret ref for the HTTP jobs (repeatable)', collect, [])
    .option(
      '--watch',
      'keep the lines in cron: print a watched manifest (for cronix serve --watch) and the ping suffix to append to each line',
    )
    .option('--server <url>', '--watch: the base URL of the cronix serve --watch')
    .option(
      '--report-secret-ref <ref>',
      "--watch: the server's report secret, from which each job's ping token is derived",
    )
    .addOption(outputOption())
    .action(async (file: string | undefined, opts: ImportFlags) => {
      const { importCrontabCommand } = await import('./commands/import.js');
      process.exitCode = await importCrontabCommand(file, opts);
    });

  program
    .command('ping-url')
    .description(
      'print the ping URL of a watched job (serve --watch), with its ping token, and the curl to append to its cron line; exit 0, 1 secret not resolved, 2 usage',
    )
    .argument('<app/job>', 'the watched job, e.g. billing/settle (app.job works too)')
    .requiredOption('--server <url>', "the cronix serve's base URL (https://cron.example.com)")
    .requiredOption(
      '--report-secret-ref <ref>',
      "the server's report secret (env:NAME, file:/path): the ping token is derived from it",
    )
    .addOption(outputOption())
    .action(
      async (target: string, opts: { server: string; reportSecretRef: string; output: string }) => {
        const { pingUrlCommand } = await import('./commands/ping-url.js');
        process.exitCode = pingUrlCommand(target, {
          server: opts.server,
          reportSecretRef: opts.reportSecretRef,
          output: outputFormat(opts.output),
        });
      },
    );

  registerReconcileCommands(program);
  registerDaemonCommands(program);
  registerAccessCommands(program);
  registerRunbookCommands(program);

  program
    .command('trigger')
    .description('fire one job once (run by the host scheduler); see "cronix trigger --help"')
    .argument('<app.job>', 'the job to fire (app/job works too)');

  program
    .command('version')
    .description('print the version')
    .addOption(outputOption())
    .action((opts: { output: string }) => {
      if (outputFormat(opts.output) === 'json')
        process.stdout.write(`${JSON.stringify({ version: pkg.version })}\n`);
      else process.stdout.write(`cronix ${pkg.version}\n`);
    });

  return program;
}

/** Parses `argv` (the full process.argv) and runs the command. */
export async function run(argv: string[]): Promise<void> {
  const program = build();
  try {
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // help and version displays exit 0; every other commander error is a usage error
      process.exitCode = err.exitCode === 0 ? EXIT.ok : EXIT.usage;
      return;
    }
    if (err instanceof UsageError) {
      process.stderr.write(`error: ${err.message}\n`);
      process.exitCode = EXIT.usage;
      return;
    }
    process.stderr.write(
      `error: internal error: ${err instanceof Error ? err.message : String(err)}\n`,
    );
    process.exitCode = EXIT.error;
  }
}

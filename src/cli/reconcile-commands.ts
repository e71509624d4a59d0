/**
 * Registers the reconciler's commands (`plan`/`diff`, `apply`, `drift`, `list`, `show`,
 * `prune`) on the CLI program. Argument parsing only: each action imports its command lazily.
 * Flags and exit codes: docs/reconcile.md.
 */
import { type Command, Option } from 'commander';
import type { ReconcileFlags } from './commands/reconcile-flags.js';

const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** Adds the output, backend and per-backend flags of SPEC §6 to `cmd`. */
function withReconcileOptions(cmd: Command): Command {
  return cmd
    .addOption(new Option('-o, --output <format>', 'output format: table or json').default('table'))
    .addOption(
      new Option(
        '--backend <name>',
        'host scheduler: crontab, systemd, kubernetes, aws-scheduler',
      ).default('crontab'),
    )
    .option(
      '--spec-dir <dir>',
      'job spec files for the shim (default $CRONIX_JOB_SPEC_DIR or /etc/cronix/jobs)',
    )
    .option('--trigger-bin <path>', 'the cronix binary the host scheduler runs (default: this one)')
    .option(
      '--secret-ref <ref>',
      'secret ref for the shim and the signed manifest fetch (repeatable)',
      collect,
      [],
    )
    .option('--lock-dir <dir>', 'passed to the installed "cronix trigger" as --lock-dir')
    .option('--state-dir <dir>', 'passed to the installed "cronix trigger" as --state-dir')
    .option('--lock-backend <url>', 'passed to the installed "cronix trigger" as --lock-backend')
    .option(
      '--report-to <url>',
      'report every fire to this cronix serve --watch (base URL); recorded in each spec file',
    )
    .option(
      '--report-secret-ref <ref>',
      'secret ref that signs the reports (repeatable; required with --report-to)',
      collect,
      [],
    )
    .option(
      '--crontab-path <path>',
      'crontab: a system crontab file (/etc/crontab, /etc/cron.d/NAME); default the user crontab',
    )
    .option('--cron-user <user>', 'crontab: user field of system crontab lines', 'root')
    .option('--cron-timezone <zone>', "crontab: the cron daemon's zone (default: detected)")
    .option('--systemd-unit-dir <dir>', 'systemd: unit directory (default /etc/systemd/system)')
    .option('--k8s-namespace <ns>', 'kubernetes: namespace')
    .option('--k8s-image <image>', 'kubernetes: image holding the cronix binary')
    .option('--kubeconfig <path>', 'kubernetes: kubeconfig file')
    .option('--k8s-secret <name>', 'kubernetes: Secret whose keys become the shim environment')
    .option(
      '--k8s-render [file]',
      'kubernetes: render YAML (to stdout or FILE) instead of calling the API',
    )
    .option('--aws-region <region>', 'aws-scheduler: region')
    .option('--aws-schedule-group <group>', 'aws-scheduler: schedule group')
    .option('--aws-target-arn <arn>', 'aws-scheduler: target ARN')
    .option('--aws-role-arn <arn>', 'aws-scheduler: role ARN the scheduler assumes');
}

/** Adds the reconciler commands to `program`. */
export function registerReconcileCommands(program: Command): void {
  withReconcileOptions(
    program
      .command('plan')
      .alias('diff')
      .description(
        'show what apply would change; exit 0, 1 error/refused, 2 usage, 3 backend unreachable, 4 fetch auth',
      )
      .argument('<manifest>', 'manifest: file path, file://, https:// or loopback http:// URL'),
  ).action(async (manifest: string, flags: ReconcileFlags) => {
    const { reconcileCommand } = await import('./commands/reconcile.js');
    process.exitCode = await reconcileCommand('plan', manifest, flags);
  });

  withReconcileOptions(
    program
      .command('apply')
      .description('install the manifest onto the host scheduler (deletes, updates, creates)')
      .argument('<manifest>', 'manifest: file path, file://, https:// or loopback http:// URL')
      .option('--dry-run', 'plan only; write nothing'),
  ).action(async (manifest: string, flags: ReconcileFlags & { dryRun?: boolean }) => {
    const { reconcileCommand } = await import('./commands/reconcile.js');
    process.exitCode = await reconcileCommand(flags.dryRun ? 'dry-run' : 'apply', manifest, flags);
  });

  withReconcileOptions(
    program
      .command('adopt')
      .description(
        'take over the entries the public cronix reconciler installed for this app (crontab, systemd, kubernetes); see docs/import.md',
      )
      .argument('<manifest>', 'manifest: file path, file://, https:// or loopback http:// URL')
      .option('--dry-run', 'only report what would be adopted'),
  ).action(async (manifest: string, flags: ReconcileFlags & { dryRun?: boolean }) => {
    const { adoptCommand } = await import('./commands/adopt.js');
    process.exitCode = await adoptCommand(manifest, flags);
  });

  withReconcileOptions(
    program
      .command('drift')
      .description(
        'compare the host scheduler with the manifest; exit 5 on drift with --exit-on-drift',
      )
      .argument('<manifest>', 'manifest: file path, file://, https:// or loopback http:// URL')
      .option('--exit-on-drift', 'exit 5 when anything differs'),
  ).action(async (manifest: string, flags: ReconcileFlags & { exitOnDrift?: boolean }) => {
    const { reconcileCommand } = await import('./commands/reconcile.js');
    process.exitCode = await reconcileCommand('drift', manifest, flags, flags.exitOnDrift === true);
  });

  withReconcileOptions(
    program
      .command('list')
      .description('list the entries cronix owns in the host scheduler')
      .option('--app <app>', 'only this app'),
  ).action(async (flags: ReconcileFlags & { app?: string }) => {
    const { listCommand } = await import('./commands/inventory.js');
    process.exitCode = await listCommand(flags);
  });

  withReconcileOptions(
    program
      .command('show')
      .description('show the installed entries and the spec file of one job')
      .argument(
        '<app/job>',
        'the job, e.g. billing/settle-invoices (billing.settle-invoices works too)',
      ),
  ).action(async (target: string, flags: ReconcileFlags) => {
    const { showCommand } = await import('./commands/inventory.js');
    process.exitCode = await showCommand(target, flags);
  });

  withReconcileOptions(
    program
      .command('prune')
      .description(
        "remove every entry cronix installed for an app (or all apps), their spec files and the shim's state of those apps (--state-dir); lock files stay",
      )
      .option('--app <app>', 'the app to remove')
      .option('--all', 'every app cronix installed on this backend')
      .option(
        '--yes',
        'really remove; without it prune only lists and exits 2 when something would go',
      ),
  ).action(async (flags: ReconcileFlags & { app?: string; all?: boolean; yes?: boolean }) => {
    const { pruneCommand } = await import('./commands/prune.js');
    process.exitCode = await pruneCommand(flags);
  });
}

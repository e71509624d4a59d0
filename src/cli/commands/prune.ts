/**
 * `cronix prune --app APP | --all [--yes]`: uninstall what apply installed. Without `--yes`
 * nothing is removed: the command lists what would go and exits 2 when that is not nothing, so
 * a script that forgot `--yes` fails loudly instead of silently keeping the entries.
 */
import { prune } from '../../reconcile/prune.js';
import { outputFormat, printJson, printLines, UsageError, type OutputFormat } from '../output.js';
import {
  backendOf,
  eventPrinter,
  RECONCILE_EXIT,
  reportFailure,
  specDirOf,
  stateDirOf,
} from './reconcile-context.js';
import type { ReconcileFlags } from './reconcile-flags.js';

/** Runs prune; exit 0 done (or nothing to do), 2 confirmation missing or usage, 1, 3 errors. */
export async function pruneCommand(
  flags: ReconcileFlags & { app?: string; all?: boolean; yes?: boolean },
): Promise<number> {
  let format: OutputFormat = 'table';
  try {
    format = outputFormat(flags.output);
    if ((flags.app === undefined) === (flags.all !== true)) {
      throw new UsageError('prune needs exactly one of --app APP (one app) or --all (every app)');
    }
    const { backend } = await backendOf(flags, false);
    const confirmed = flags.yes === true;
    const result = await prune(backend, {
      ...(flags.app !== undefined ? { app: flags.app } : {}),
      specDir: specDirOf(flags),
      // the shim's state lives on this host: not for backends whose shim runs elsewhere
      ...(backend.localSpecFiles === false ? {} : { stateDir: stateDirOf(flags) }),
      dryRun: !confirmed,
      onEvent: eventPrinter(format),
    });
    if (format === 'json') {
      printJson({
        backend: backend.name,
        target: backend.target ?? null,
        app: flags.app ?? null,
        confirmed,
        removed: confirmed ? result.entries.map((e) => e.id) : [],
        would_remove: confirmed ? [] : result.entries.map((e) => e.id),
        spec_files: result.specFiles,
        state_dirs: result.stateDirs,
      });
    } else if (result.entries.length + result.specFiles.length + result.stateDirs.length === 0) {
      printLines([
        `nothing to prune in ${backend.name}${flags.app ? ` for app ${flags.app}` : ''}`,
      ]);
    } else if (confirmed) {
      printLines([
        `pruned ${result.entries.length} entr${result.entries.length === 1 ? 'y' : 'ies'}, ${result.specFiles.length} spec file(s) and ${result.stateDirs.length} state dir(s)`,
      ]);
    } else {
      printLines([
        'would remove:',
        ...result.entries.map((e) => `  ${e.id}`),
        ...result.specFiles.map((p) => `  spec file ${p}`),
        ...result.stateDirs.map((p) => `  state dir ${p}`),
        'nothing was removed: run again with --yes to remove these',
      ]);
    }
    const pending =
      !confirmed && result.entries.length + result.specFiles.length + result.stateDirs.length > 0;
    return pending ? RECONCILE_EXIT.usage : RECONCILE_EXIT.ok;
  } catch (err) {
    return reportFailure(err, format);
  }
}

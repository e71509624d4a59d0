/**
 * `cronix adopt <manifest> --backend crontab|systemd|kubernetes [--dry-run]` (SPEC §14): take over
 * the entries the public cronix reconciler installed for the manifest's app, so that `apply` owns
 * them. Prints what was adopted and removed, then the plan as it stands afterwards (entries the
 * public reconciler never installed are left for `apply` to create). Exit codes as `apply`.
 */
import { adoptReconcile } from '../../reconcile/apply.js';
import { desiredEntries } from '../../reconcile/desired.js';
import { planToJson, renderPlanTable } from '../../reconcile/plan.js';
import { outputFormat, printJson, printLines, type OutputFormat } from '../output.js';
import {
  backendOf,
  loadManifestOrFail,
  RECONCILE_EXIT,
  reportFailure,
  specDirOf,
} from './reconcile-context.js';
import type { ReconcileFlags } from './reconcile-flags.js';

/** Runs the command and returns its exit code. */
export async function adoptCommand(
  source: string,
  flags: ReconcileFlags & { dryRun?: boolean },
): Promise<number> {
  let format: OutputFormat = 'table';
  try {
    format = outputFormat(flags.output);
    const { backend, options: backendOptions } = await backendOf(flags);
    const manifest = await loadManifestOrFail(source, flags);
    const desired = desiredEntries(manifest, {
      secretRefs: flags.secretRef,
      ...(backendOptions.report ? { report: backendOptions.report } : {}),
    });
    const r = await adoptReconcile(desired, backend, {
      app: manifest.app,
      specDir: specDirOf(flags),
      dryRun: flags.dryRun === true,
    });
    const dry = flags.dryRun === true;
    if (format === 'json') {
      printJson({
        command: 'adopt',
        app: manifest.app,
        backend: backend.name,
        target: backend.target ?? null,
        adopted: r.report.adopted,
        removed: r.report.removed,
        dry_run: dry,
        refused: r.refused,
        plan_after: planToJson(r.after.plan),
      });
    } else {
      const verb = dry ? 'would adopt' : 'adopted';
      printLines([
        `${backend.name}${backend.target ? ` (${backend.target})` : ''}, app ${manifest.app}: ${verb} ${r.report.adopted.length} entr${r.report.adopted.length === 1 ? 'y' : 'ies'} of the public cronix reconciler${r.report.removed.length > 0 ? `, ${dry ? 'would remove' : 'removed'} ${r.report.removed.length} the manifest no longer has` : ''}.`,
        ...r.report.adopted.map((id) => `  ${verb} ${id}`),
        ...r.report.removed.map((id) => `  ${dry ? 'would remove' : 'removed'} ${id}`),
        '',
        dry ? 'Plan before adoption:' : 'Plan after adoption:',
        ...renderPlanTable(r.after.plan),
        ...(r.after.plan.creates.length + r.after.plan.updates.length > 0 && !r.refused
          ? ['Run "cronix apply" with the same flags for the entries left to create or update.']
          : []),
      ]);
    }
    if (r.refused) {
      process.stderr.write('error: the plan was refused; nothing was adopted\n');
      return RECONCILE_EXIT.error;
    }
    return RECONCILE_EXIT.ok;
  } catch (err) {
    return reportFailure(err, format);
  }
}

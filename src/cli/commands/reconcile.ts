/**
 * `cronix plan` (alias `diff`), `cronix apply [--dry-run]` and `cronix drift [--exit-on-drift]`.
 * One JSON shape for all three (docs/reconcile.md): the plan, the spec file changes, and
 * `changed` / `applied` / `dry_run`.
 */
import { serviceRefusals } from '../../reconcile/services.js';
import {
  applyReconcile,
  planReconcile,
  reconcileChanges,
  type ReconcileResult,
} from '../../reconcile/apply.js';
import type { Backend } from '../../reconcile/backend.js';
import { desiredEntries, shimNotifyWarnings } from '../../reconcile/desired.js';
import { planToJson, renderPlanTable, type PlanJson } from '../../reconcile/plan.js';
import { outputFormat, printJson, printLines, type OutputFormat } from '../output.js';
import {
  backendOf,
  eventPrinter,
  loadManifestOrFail,
  RECONCILE_EXIT,
  reportFailure,
  specDirOf,
} from './reconcile-context.js';
import type { ReconcileFlags } from './reconcile-flags.js';

/** Which command runs. */
export type ReconcileMode = 'plan' | 'apply' | 'dry-run' | 'drift';

/** The JSON document of plan, apply and drift. */
export interface ReconcileJson extends PlanJson {
  command: 'plan' | 'apply' | 'drift';
  target: string | null;
  /** What the host scheduler runs (`<app>.<job>` standing for the job); null for API backends. */
  trigger_command: string | null;
  spec_files: { write: string[]; remove: string[] };
  /** Anything differs between the manifest and the host (the drift flag). */
  changed: boolean;
  /** Changes were written (false for plan, drift, dry runs and refused plans). */
  applied: boolean;
  dry_run: boolean;
}

function toJson(mode: ReconcileMode, r: ReconcileResult, backend: Backend): ReconcileJson {
  return {
    command: mode === 'dry-run' ? 'apply' : mode,
    ...planToJson(r.plan),
    target: backend.target ?? null,
    trigger_command: backend.triggerLine ?? null,
    spec_files: { write: r.specFiles.write.map((w) => w.path), remove: r.specFiles.remove },
    changed: reconcileChanges(r),
    applied: r.applied,
    dry_run: mode === 'dry-run',
  };
}

function specLines(r: ReconcileResult): string[] {
  return [
    ...r.specFiles.write.map((w) => `spec file ${w.path}: will be written`),
    ...r.specFiles.remove.map((p) => `spec file ${p}: will be removed`),
  ];
}

function printTable(mode: ReconcileMode, r: ReconcileResult, backend: Backend): void {
  const target = backend.target;
  const p = r.plan;
  const header = `${p.backend}${target ? ` (${target})` : ''}, app ${p.app}`;
  const changed = reconcileChanges(r);
  if (mode === 'apply' && r.applied) {
    if (!changed) {
      printLines([`${header}: no changes, ${p.unchanged.length} entries up to date.`]);
      return;
    }
    printLines([
      `${header}: applied ${p.creates.length} created, ${p.updates.length} updated, ${p.deletes.length} deleted, ${p.unchanged.length} unchanged; ${r.specFiles.write.length} spec file(s) written, ${r.specFiles.remove.length} removed.`,
    ]);
    return;
  }
  if (mode === 'drift' && !changed && p.refusals.length === 0) {
    printLines([`${header}: no drift, ${p.unchanged.length} entries match the manifest.`]);
    return;
  }
  const lines = [`${header}:`, ...renderPlanTable(p)];
  // a refused plan writes nothing: listing spec files as "will be written" would mislead
  const spec = p.refusals.length > 0 ? [] : specLines(r);
  const runs = backend.triggerLine ? [`host scheduler runs: ${backend.triggerLine}`] : [];
  if (spec.length + runs.length > 0) lines.splice(lines.length - 2, 0, '', ...spec, ...runs);
  if (mode === 'dry-run') lines.push('(dry run: nothing was written)');
  if (mode === 'drift') lines.push(changed ? 'Drift found.' : 'No drift.');
  printLines(lines);
}

/**
 * Runs plan / apply / drift and returns the exit code: 0 ok; 1 error or refused plan; 2 usage;
 * 3 backend unreachable; 4 manifest fetch auth failure; 5 drift with `--exit-on-drift`.
 */
export async function reconcileCommand(
  mode: ReconcileMode,
  source: string,
  flags: ReconcileFlags,
  exitOnDrift = false,
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
    if (mode !== 'drift') {
      const warn = (event: string, w: string): void => {
        process.stderr.write(
          format === 'json'
            ? `${JSON.stringify({ time: new Date().toISOString(), level: 'warning', event, msg: w })}\n`
            : `warning: ${w}\n`,
        );
      };
      for (const w of backend.warnings?.(desired) ?? []) warn('secret-ref-unseen', w);
      for (const w of shimNotifyWarnings(manifest, backendOptions.report !== undefined))
        warn('notify-unsent', w);
    }
    const options = { app: manifest.app, specDir: specDirOf(flags) };
    // services are the daemon's (SPEC §17): refused before anything is written
    const refusedServices = serviceRefusals(manifest, backend.name);
    const result: ReconcileResult =
      mode === 'apply' && refusedServices.length === 0
        ? await applyReconcile(desired, backend, { ...options, onEvent: eventPrinter(format) })
        : { ...(await planReconcile(desired, backend, options)), applied: false };
    result.plan.refusals.push(...refusedServices);
    // render-only YAML on stdout keeps stdout for the YAML: the summary goes to stderr
    const summaryTo = backend.writesStdout
      ? (line: string) => process.stderr.write(`${line}\n`)
      : undefined;
    if (summaryTo) summaryTo(JSON.stringify(toJson(mode, result, backend)));
    else if (format === 'json') printJson(toJson(mode, result, backend));
    else printTable(mode, result, backend);
    for (const notice of backend.notices ?? []) process.stderr.write(`notice: ${notice}\n`);
    if (result.plan.refusals.length > 0) {
      const n = result.plan.refusals.length;
      process.stderr.write(
        `error: ${n} entr${n === 1 ? 'y was' : 'ies were'} refused; nothing was written\n`,
      );
      return RECONCILE_EXIT.error;
    }
    if (mode === 'drift' && exitOnDrift && reconcileChanges(result)) return RECONCILE_EXIT.drift;
    return RECONCILE_EXIT.ok;
  } catch (err) {
    return reportFailure(err, format);
  }
}

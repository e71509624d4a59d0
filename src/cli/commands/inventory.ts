/** `cronix list` and `cronix show <app/job>`: what cronix owns in a host scheduler. */
import { parseJobName } from '../../contract/run.js';
import type { OwnedEntry } from '../../reconcile/backend.js';
import { compareEntries } from '../../reconcile/plan.js';
import { readSpecFile, specFilePath } from '../../reconcile/spec-files.js';
import { outputFormat, printJson, printLines, UsageError, type OutputFormat } from '../output.js';
import { backendOf, RECONCILE_EXIT, reportFailure, specDirOf } from './reconcile-context.js';
import type { ReconcileFlags } from './reconcile-flags.js';

/** One owned entry in the JSON output of list and show. */
export interface OwnedEntryJson {
  id: string;
  app: string;
  job: string;
  schedule_index: number;
  hash: string;
  /** Why the installed entry differs from its marker, or null. */
  modified: string | null;
}

const entryJson = (e: OwnedEntry): OwnedEntryJson => ({
  id: e.id,
  app: e.app,
  job: e.job,
  schedule_index: e.scheduleIndex,
  hash: e.hash,
  modified: e.modified ?? null,
});

function table(entries: readonly OwnedEntry[]): string[] {
  const rows = [
    ['ENTRY', 'JOB', 'INDEX', 'HASH', 'STATE'],
    ...entries.map((e) => [
      e.id,
      `${e.app}/${e.job}`,
      String(e.scheduleIndex),
      e.hash,
      e.modified ?? 'ok',
    ]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
}

/** `cronix list [--app APP]`: exit 0, 2 usage, 3 backend unreachable. */
export async function listCommand(flags: ReconcileFlags & { app?: string }): Promise<number> {
  let format: OutputFormat = 'table';
  try {
    format = outputFormat(flags.output);
    const { backend } = await backendOf(flags, false);
    const entries = (await backend.list(flags.app)).sort(compareEntries);
    if (format === 'json') {
      printJson({
        backend: backend.name,
        target: backend.target ?? null,
        entries: entries.map(entryJson),
      });
    } else if (entries.length === 0) {
      printLines([
        `no cronix entries in ${backend.name}${backend.target ? ` (${backend.target})` : ''}${flags.app ? ` for app ${flags.app}` : ''}`,
      ]);
    } else {
      printLines(table(entries));
    }
    return RECONCILE_EXIT.ok;
  } catch (err) {
    return reportFailure(err, format);
  }
}

/** `cronix show <app/job>` (or `<app>.<job>`): exit 0, 1 when nothing is installed for the job, 2, 3. */
export async function showCommand(target: string, flags: ReconcileFlags): Promise<number> {
  let format: OutputFormat = 'table';
  try {
    format = outputFormat(flags.output);
    const named = parseJobName(target);
    if (named === null) {
      throw new UsageError(
        `the job must be named app/job (or app.job), e.g. billing/settle-invoices; found ${JSON.stringify(target)}`,
      );
    }
    const { app, job } = named;
    const { backend } = await backendOf(flags, false);
    const entries = (await backend.list(app)).filter((e) => e.job === job).sort(compareEntries);
    const path = backend.localSpecFiles === false ? null : specFilePath(specDirOf(flags), app, job);
    const spec = path === null ? null : readSpecFile(path);
    if (format === 'json') {
      printJson({
        app,
        job,
        backend: backend.name,
        target: backend.target ?? null,
        entries: entries.map(entryJson),
        spec_file: path === null ? null : { path, present: spec !== null, content: spec },
      });
    } else {
      const lines = [
        `${app}/${job} in ${backend.name}${backend.target ? ` (${backend.target})` : ''}:`,
      ];
      lines.push(...(entries.length > 0 ? table(entries).map((l) => `  ${l}`) : ['  no entries']));
      if (path !== null) {
        lines.push(`spec file ${path}${spec === null ? ': absent' : ':'}`);
        if (spec !== null)
          lines.push(
            ...JSON.stringify(spec, null, 2)
              .split('\n')
              .map((l) => `  ${l}`),
          );
      }
      printLines(lines);
    }
    if (entries.length === 0 && spec === null) {
      process.stderr.write(`error: ${app}/${job} is not installed in ${backend.name}\n`);
      return RECONCILE_EXIT.error;
    }
    return RECONCILE_EXIT.ok;
  } catch (err) {
    return reportFailure(err, format);
  }
}

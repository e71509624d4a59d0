/**
 * `cronix import crontab [FILE|-] [--system] [--app NAME] [-o json]` (SPEC §14): the manifest on
 * stdout, one verdict per line on stderr (text, or one JSON object per line with `-o json`).
 * Exit 0 when a manifest was printed, 1 when nothing could be imported or the file cannot be
 * read, 2 for a bad flag. See docs/import.md.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { LIMITS } from '../../contract/manifest/defaults.js';
import { parseManifest } from '../../contract/manifest/index.js';
import { checkTimeZone } from '../../contract/schedule/index.js';
import { importCrontab, slug, type Verdict } from '../../import/crontab-import.js';
import { detectHostZone } from '../../reconcile/backends/crontab.js';
import { userTarget } from '../../reconcile/backends/crontab-target.js';
import { EXIT, UsageError, outputFormat } from '../output.js';

/** Flags of `cronix import crontab`. */
export interface ImportFlags {
  system?: boolean;
  app?: string;
  output?: string;
  cronTimezone?: string;
  secretRef?: string[];
}

const APP = /^[a-z][a-z0-9-]{0,62}$/;
const REF = /^[a-zA-Z][a-zA-Z0-9_:./-]{0,127}$/;

function readSource(file: string | undefined): { text: string; name: string } {
  if (file === '-') return { text: readFileSync(0, 'utf8'), name: 'stdin' };
  if (file === undefined) return { text: userTarget().read(), name: 'user crontab' };
  try {
    return { text: readFileSync(file, 'utf8'), name: file };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new ImportReadError(
      `cannot read crontab ${file}: ${code}; check the path and permissions`,
    );
  }
}

class ImportReadError extends Error {}

function defaultApp(file: string | undefined): string {
  if (file === undefined || file === '-') return 'crontab';
  return slug(basename(file), 'crontab');
}

/** Runs the command and returns its exit code. */
export async function importCrontabCommand(
  file: string | undefined,
  flags: ImportFlags,
): Promise<number> {
  const format = outputFormat(flags.output);
  const app = flags.app ?? defaultApp(file);
  if (!APP.test(app)) {
    throw new UsageError(
      `--app ${JSON.stringify(app)} is not an app name (expected ^[a-z][a-z0-9-]{0,62}$, such as billing-service)`,
    );
  }
  for (const ref of flags.secretRef ?? []) {
    if (!REF.test(ref))
      throw new UsageError(
        `--secret-ref ${JSON.stringify(ref)} is not a secret ref (env:NAME, file:/path or raw:value)`,
      );
  }
  const hostZone = flags.cronTimezone ?? detectHostZone(process.env);
  const zoneError = checkTimeZone(hostZone);
  if (zoneError !== null) {
    throw new UsageError(
      `${flags.cronTimezone !== undefined ? '--cron-timezone' : "the cron daemon's zone"} ${JSON.stringify(hostZone)}: ${zoneError}; pass --cron-timezone with an IANA zone`,
    );
  }
  const system =
    flags.system ??
    (file !== undefined && (file === '/etc/crontab' || file.startsWith('/etc/cron.d/')));
  let source;
  try {
    source = readSource(file);
  } catch (err) {
    process.stderr.write(`error: ${(err as Error).message}\n`);
    return EXIT.error;
  }
  const result = importCrontab(source.text, {
    app,
    system,
    hostZone,
    secretRefs: flags.secretRef ?? [],
  });
  const say = (v: Verdict): void => {
    if (format === 'json') process.stderr.write(`${JSON.stringify(v)}\n`);
    else process.stderr.write(`line ${v.line}: ${v.verdict}: ${v.message}\n`);
  };
  result.verdicts.forEach(say);
  if (result.manifest.jobs.length === 0) {
    process.stderr.write(
      `error: no line of ${source.name} could be imported (a manifest needs at least one job)\n`,
    );
    return EXIT.error;
  }
  if (result.manifest.jobs.length > LIMITS.jobs.max) {
    process.stderr.write(
      `error: ${source.name} has ${result.manifest.jobs.length} importable lines, but a manifest holds at most ${LIMITS.jobs.max} jobs; split the crontab and import each part with its own --app\n`,
    );
    return EXIT.error;
  }
  const check = parseManifest(result.manifest);
  if (!check.ok) {
    // a defect of the importer, not of the input: say so instead of printing a bad manifest
    for (const e of check.errors) process.stderr.write(`error: ${e.path}: ${e.message}\n`);
    process.stderr.write(
      'error: internal error: the imported manifest is invalid (please report)\n',
    );
    return EXIT.error;
  }
  process.stdout.write(`${JSON.stringify(result.manifest, null, 2)}\n`);
  const lines = result.importedLines.join(', ');
  const warning = `cron keeps running the imported lines (${lines} of ${source.name}) until you remove them: after "cronix apply" (or while "cronix serve" runs these jobs), delete or comment out those lines, or every job fires twice`;
  if (format === 'json')
    process.stderr.write(
      `${JSON.stringify({ level: 'warning', message: warning, lines: result.importedLines })}\n`,
    );
  else process.stderr.write(`warning: ${warning}\n`);
  return EXIT.ok;
}

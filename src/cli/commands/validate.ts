/**
 * `cronix validate <file>`: exit 0 valid, 1 invalid, 2 usage. The human output quotes the
 * manifest's keys and values, so its control characters are written as `\xHH` (SPEC §9 item 9);
 * `-o json` is JSON.
 */
import { manifestWarnings } from '../../contract/manifest/warnings.js';
import { escapeControls } from '../../io/terminal.js';
import { loadManifestFile } from '../../source/file.js';
import { EXIT, printJson, printLines, type OutputFormat } from '../output.js';

/** Runs the command and returns its exit code. */
export async function validateCommand(file: string, format: OutputFormat): Promise<number> {
  const result = await loadManifestFile(file);
  const warnings = result.ok ? manifestWarnings(result.manifest) : [];
  if (format === 'json') {
    printJson(
      result.ok
        ? { valid: true, errors: [], warnings }
        : { valid: false, errors: result.errors, warnings },
    );
    return result.ok ? EXIT.ok : EXIT.error;
  }
  for (const w of warnings)
    process.stderr.write(escapeControls(`warning: job ${w.job}: ${w.message}`) + '\n');
  if (result.ok) {
    const { app, jobs } = result.manifest;
    const schedules = jobs.reduce((n, j) => n + j.schedules.length, 0);
    printLines([
      `${escapeControls(file)}: valid (app ${app}, ${jobs.length} job${jobs.length === 1 ? '' : 's'}, ${schedules} schedule${schedules === 1 ? '' : 's'})`,
    ]);
    return EXIT.ok;
  }
  const n = result.errors.length;
  printLines([
    `${escapeControls(file)}: invalid, ${n} error${n === 1 ? '' : 's'}:`,
    ...result.errors.map((e) =>
      escapeControls(`  ${e.path === '' ? '(root)' : e.path}: ${e.message}`),
    ),
  ]);
  return EXIT.error;
}

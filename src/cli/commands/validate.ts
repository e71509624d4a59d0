/** `cronix validate <file>`: exit 0 valid, 1 invalid, 2 usage. */
import { loadManifestFile } from '../../source/file.js';
import { EXIT, printJson, printLines, type OutputFormat } from '../output.js';

/** Runs the command and returns its exit code. */
export async function validateCommand(file: string, format: OutputFormat): Promise<number> {
  const result = await loadManifestFile(file);
  if (format === 'json') {
    printJson(result.ok ? { valid: true, errors: [] } : { valid: false, errors: result.errors });
    return result.ok ? EXIT.ok : EXIT.error;
  }
  if (result.ok) {
    const { app, jobs } = result.manifest;
    const schedules = jobs.reduce((n, j) => n + j.schedules.length, 0);
    printLines([
      `${file}: valid (app ${app}, ${jobs.length} job${jobs.length === 1 ? '' : 's'}, ${schedules} schedule${schedules === 1 ? '' : 's'})`,
    ]);
    return EXIT.ok;
  }
  const n = result.errors.length;
  printLines([
    `${file}: invalid, ${n} error${n === 1 ? '' : 's'}:`,
    ...result.errors.map((e) => `  ${e.path === '' ? '(root)' : e.path}: ${e.message}`),
  ]);
  return EXIT.error;
}

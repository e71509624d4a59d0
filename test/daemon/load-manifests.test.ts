/** `cronix serve` loads its manifest files in order, reading ahead; all errors of all files at once. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadManifests } from '../../src/daemon/boot.js';

const dir = mkdtempSync(join(tmpdir(), 'cronix-load-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const file = (name: string, text: string): string => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};
const valid = (app: string): string =>
  JSON.stringify({
    version: 1,
    app,
    jobs: [{ name: 'j', schedule: '* * * * *', request: { url: 'https://example.com/' } }],
  });

it('keeps the order of 30 files (more than are read ahead) and reports every bad one', async () => {
  const files: string[] = [];
  for (let i = 0; i < 30; i++) files.push(file(`m${i}.json`, valid(`app${i}`)));
  files[3] = join(dir, 'missing.json');
  files[11] = file('broken.json', '{"version": 1,');
  files[20] = file('again.json', valid('app5'));
  files[29] = dir; // a directory
  const r = await loadManifests(files);
  expect(r.manifests.map((m) => m.app)).toEqual(
    Array.from({ length: 30 }, (_, i) => `app${i}`).filter((_, i) => ![3, 11, 20, 29].includes(i)),
  );
  expect(r.errors.map((e) => [e.file, e.path])).toEqual([
    [files[3], ''],
    [files[11], ''],
    [files[20], 'app'],
    [files[29], ''],
  ]);
  expect(r.errors.map((e) => e.message)).toEqual([
    `cannot read manifest file ${files[3]}: no such file`,
    expect.stringMatching(/^invalid JSON in .*broken\.json at line 1/),
    `app "app5" is already defined by ${files[5]}`,
    `cannot read manifest file ${dir}: is a directory`,
  ]);
});

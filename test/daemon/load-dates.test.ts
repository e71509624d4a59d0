/**
 * Blackout `dates_file` windows as a manifest file is loaded (SPEC §16 "Calendars"): a relative
 * path is read from the manifest's directory, an absolute one as it is, each file once; its
 * dates are attached to the window; a missing file or a bad line is an error at the window's
 * `dates_file` that names the file and the line (the input index of the job, not its sorted one).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { loadManifests } from '../../src/daemon/boot.js';
import { loadManifestFile } from '../../src/source/file.js';

const dir = mkdtempSync(join(tmpdir(), 'cronix-dates-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string): string => {
  const f = join(dir, name);
  writeFileSync(f, text);
  return f;
};
const job = (name: string, blackout: unknown) => ({
  name,
  schedule: '0 * * * *',
  request: { url: 'https://example.com/' },
  policy: { blackout },
});

it('reads relative (from the manifest directory) and absolute files and attaches their dates', async () => {
  mkdirSync(join(dir, 'cal'));
  write('cal/holidays.txt', '# public holidays\n2026-12-25 # Christmas\n2026-01-01\n');
  const abs = write('other.txt', '2026-05-01\n');
  mkdirSync(join(dir, 'apps'));
  const m = write(
    'apps/m.json',
    JSON.stringify({
      version: 1,
      app: 'a',
      jobs: [
        job('b', [{ dates_file: '../cal/holidays.txt' }, { dates_file: abs }]),
        job('a', [
          { cron: '0 1 * * *', duration_seconds: 60 },
          { dates_file: '../cal/holidays.txt' },
        ]),
      ],
    }),
  );
  const r = await loadManifestFile(m);
  if (!r.ok) throw new Error(JSON.stringify(r.errors));
  const [a, b] = r.manifest.jobs;
  expect(a?.policy.blackout?.[1]).toEqual({
    dates_file: '../cal/holidays.txt',
    dates: ['2026-01-01', '2026-12-25'],
  });
  expect(b?.policy.blackout).toEqual([
    { dates_file: '../cal/holidays.txt', dates: ['2026-01-01', '2026-12-25'] },
    { dates_file: abs, dates: ['2026-05-01'] },
  ]);
});

it('a missing file and bad lines are errors naming the file, the line and the input path', async () => {
  write('bad.txt', '2026-12-25\n2026-12-32\n\nnot a date # oops\n');
  const m = write(
    'm2.json',
    JSON.stringify({
      version: 1,
      app: 'b',
      jobs: [
        job('z', [{ dates_file: 'bad.txt' }]),
        job('a', [
          { from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' },
          { dates_file: 'gone.txt' },
        ]),
      ],
    }),
  );
  const r = await loadManifests([m]);
  expect(r.manifests).toEqual([]);
  expect(r.errors).toEqual([
    {
      file: m,
      path: 'jobs/1/policy/blackout/1/dates_file',
      message: `cannot read dates file gone.txt (${join(dir, 'gone.txt')}): no such file`,
    },
    {
      file: m,
      path: 'jobs/0/policy/blackout/0/dates_file',
      message: `bad.txt (${join(dir, 'bad.txt')}) line 2: "2026-12-32" is not a day of the calendar`,
    },
    {
      file: m,
      path: 'jobs/0/policy/blackout/0/dates_file',
      message: `bad.txt (${join(dir, 'bad.txt')}) line 4: expected a date YYYY-MM-DD, found "not a date"`,
    },
  ]);
});

it('refuses a file larger than 1 MiB and a directory', async () => {
  write('big.txt', '2026-01-01\n'.repeat(100_000));
  mkdirSync(join(dir, 'adir'));
  const m = write(
    'm3.json',
    JSON.stringify({
      version: 1,
      app: 'c',
      jobs: [job('j', [{ dates_file: 'big.txt' }, { dates_file: 'adir' }])],
    }),
  );
  const r = await loadManifestFile(m);
  expect(r.ok ? [] : r.errors.map((e) => e.message)).toEqual([
    expect.stringMatching(/^cannot read dates file big\.txt .*: larger than 1 MiB$/),
    expect.stringMatching(/^cannot read dates file adir .*: (not a regular file|is a directory)$/),
  ]);
});

/**
 * Manifest files are size-checked before they are read (finding 14): `cronix validate /dev/zero`
 * read 3 GB before its 10 MiB check. A regular file is refused from its size, a device outright,
 * and a pipe is read up to the limit plus one byte — the same in `validate` and `serve`.
 */
import { execFileSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cronixAsync } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'cronix-size-'));

describe('manifest files are size-checked before they are read', () => {
  it('validate /dev/zero: refused as a device, nothing read', async () => {
    const r = await cronixAsync(['validate', '/dev/zero']);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain('cannot read manifest file /dev/zero: not a regular file');
  });

  it('a 3 GiB (sparse) file is refused from its size', async () => {
    const big = join(dir, 'big.json');
    writeFileSync(big, '');
    truncateSync(big, 3 * 1024 ** 3);
    const r = await cronixAsync(['validate', big]);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`manifest file ${big} is larger than 10 MiB (3072.0 MiB)`);
  });

  it('a pipe is read up to 10 MiB + 1 byte and no further', async () => {
    const fifo = join(dir, 'pipe.json');
    execFileSync('mkfifo', [fifo]);
    const validating = cronixAsync(['validate', fifo]);
    // the writer offers 64 MiB; the reader closes after 10 MiB + 1, and the writer gets EPIPE
    let written = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    await new Promise<void>((resolve) => {
      const out = createWriteStream(fifo);
      out.on('error', () => resolve());
      out.on('close', () => resolve());
      const pump = (): void => {
        while (written < 64 * 1024 * 1024) {
          written += chunk.length;
          if (!out.write(chunk)) {
            out.once('drain', pump);
            return;
          }
        }
        out.end();
      };
      out.on('open', pump);
    });
    const r = await validating;
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`manifest file ${fifo} is larger than 10 MiB`);
    // what the pipe held when the reader left, at most: its buffer (1 MiB at most on Linux)
    expect(written).toBeLessThan(12 * 1024 * 1024);
  });

  it('a valid manifest of several hundred KiB through a pipe is read whole (its buffer grows)', async () => {
    const jobs = Array.from({ length: 250 }, (_, i) => ({
      name: `job-${i}`,
      schedule: '0 3 * * *',
      request: { url: `https://example.com/hooks/${'x'.repeat(1200)}/${i}` },
      auth: { secret_refs: ['env:CRON_SECRET'] },
    }));
    const text = JSON.stringify({ version: 1, app: 'piped', jobs });
    expect(text.length).toBeGreaterThan(256 * 1024); // past three doublings of the first 64 KiB
    const fifo = join(dir, 'valid-pipe.json');
    execFileSync('mkfifo', [fifo]);
    const validating = cronixAsync(['validate', fifo]);
    await new Promise<void>((resolve, reject) => {
      const out = createWriteStream(fifo);
      out.on('error', reject);
      out.on('close', () => resolve());
      out.end(text);
    });
    const r = await validating;
    expect(r.stdout).toContain(`${fifo}: valid (app piped, 250 jobs, 250 schedules)`);
    expect(r.status).toBe(0);
  });

  it('serve refuses /dev/zero the same way, at once', async () => {
    const r = await cronixAsync([
      'serve',
      '/dev/zero',
      '--data-dir',
      join(dir, 'data'),
      '--listen',
      '127.0.0.1:0',
    ]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(
      '/dev/zero: (root): cannot read manifest file /dev/zero: not a regular file',
    );
  });
});

/**
 * What `cronix serve` writes and reads at start-up, with real processes: the data dir is private
 * (0700, a pre-existing 0755 one narrowed; finding 15), the generated token is written
 * atomically and durably (temp file, fsync, rename, fsync of the directory; finding 12, shown
 * with strace), an empty token left by a crashed first start is replaced, and a token file that
 * others can read, or that is missing, is refused with the command that fixes it (finding 10).
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSink, type Sink } from '../helpers/sink.js';
import { manifestDir, spawnServe, type Served } from '../helpers/serve.js';

let sink: Sink;
let dir: string;

beforeAll(async () => {
  sink = await startSink();
  dir = manifestDir('files', [
    { name: 'yearly', schedule: '0 0 1 1 *', request: { url: `${sink.url}/y` } },
  ]);
});
afterAll(async () => {
  await sink.close();
});

async function stop(s: Served): Promise<void> {
  s.child.kill('SIGTERM');
  await s.exited;
}

/** Runs `serve` until it exits (a start-up refusal); returns its code and output. */
async function refused(
  args: string[],
  dataDir: string,
): Promise<{ code: number | null; out: string }> {
  const s = await spawnServe(dir, 0, { args, dataDir, waitListening: false });
  const { code } = await s.exited;
  return { code, out: s.output() };
}

const mode = (path: string): number => statSync(path).mode & 0o777;

describe('the data dir is private', () => {
  it('a new data dir is 0700', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'cronix-dd-')), 'new', 'data');
    const s = await spawnServe(dir, 0, { dataDir });
    await stop(s);
    expect(mode(dataDir)).toBe(0o700);
    expect(mode(join(dataDir, 'token'))).toBe(0o600);
  });

  it('a pre-existing 0755 data dir is narrowed to 0700, so nobody else reaches ledger.sqlite', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'cronix-dd-')), 'data');
    mkdirSync(dataDir, { mode: 0o755 });
    chmodSync(dataDir, 0o755);
    const s = await spawnServe(dir, 0, { dataDir });
    await stop(s);
    expect(mode(dataDir)).toBe(0o700);
    expect(statSync(join(dataDir, 'ledger.sqlite')).isFile()).toBe(true);
  });

  it('a ledger left 0644 by an older start is narrowed to 0600, its WAL too', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'cronix-dd-')), 'data');
    const first = await spawnServe(dir, 0, { dataDir });
    await stop(first);
    for (const f of ['ledger.sqlite', 'ledger.sqlite-wal'])
      try {
        chmodSync(join(dataDir, f), 0o644);
      } catch {
        // no WAL left after a clean stop
      }
    const s = await spawnServe(dir, 0, { dataDir });
    expect(mode(join(dataDir, 'ledger.sqlite'))).toBe(0o600);
    expect(mode(join(dataDir, 'ledger.sqlite-wal'))).toBe(0o600);
    await stop(s);
  });

  it.skipIf(process.getuid?.() !== 0)(
    'a data dir of another user stays as it is, with a warning naming the fix',
    async () => {
      const dataDir = join(mkdtempSync(join(tmpdir(), 'cronix-dd-')), 'data');
      mkdirSync(dataDir, { mode: 0o777 });
      chmodSync(dataDir, 0o777);
      chownSync(dataDir, 65534, 65534);
      const s = await spawnServe(dir, 0, { dataDir });
      await stop(s);
      expect(mode(dataDir)).toBe(0o777);
      expect(s.output()).toContain(`data dir ${dataDir} is open to other users (mode 0777)`);
      expect(s.output()).toContain(`chmod 700 ${dataDir}`);
    },
  );
});

describe('the generated token', () => {
  it('is written to a temp file, fsynced, renamed into place, and the directory fsynced', async () => {
    const work = mkdtempSync(join(tmpdir(), 'cronix-dd-'));
    const dataDir = join(work, 'data');
    const log = join(work, 'strace.log');
    const s = await spawnServe(dir, 0, {
      dataDir,
      wrap: [
        'strace',
        '-f',
        '-qq',
        '-o',
        log,
        '-e',
        'trace=openat,open,fsync,fdatasync,rename,renameat,renameat2',
      ],
    });
    const holder = JSON.parse(readFileSync(join(dataDir, 'serve.holder'), 'utf8')) as {
      pid: number;
    };
    process.kill(holder.pid, 'SIGTERM');
    await s.exited;
    // follow file descriptors through the trace: fd → path at its last open
    const fds = new Map<string, string>();
    const steps: string[] = [];
    const token = join(dataDir, 'token');
    for (const line of readFileSync(log, 'utf8').split('\n')) {
      const open = /open(?:at)?\((?:AT_FDCWD, )?"([^"]+)".*\)\s+=\s+(\d+)$/.exec(line);
      if (open) fds.set(open[2]!, open[1]!);
      const sync = /f(?:data)?sync\((\d+)\)\s+=\s+0/.exec(line);
      if (sync) steps.push(`fsync ${fds.get(sync[1]!)}`);
      const rename =
        /rename(?:at2?)?\((?:AT_FDCWD, )?"([^"]+)", (?:AT_FDCWD, )?"([^"]+)".*=\s+0/.exec(line);
      if (rename) steps.push(`rename ${rename[1]} -> ${rename[2]}`);
    }
    const renamed = steps.findIndex((x) => x.startsWith('rename ') && x.endsWith(` -> ${token}`));
    expect(renamed, steps.join('\n')).toBeGreaterThan(0);
    const tmp = /^rename (\S+) -> /.exec(steps[renamed]!)![1]!;
    expect(tmp.startsWith(join(dataDir, '.token.'))).toBe(true);
    expect(steps.slice(0, renamed)).toContain(`fsync ${tmp}`);
    expect(steps.slice(renamed)).toContain(`fsync ${dataDir}`);
    expect(mode(token)).toBe(0o600);
  });

  it('left empty by a crashed first start, it is generated anew (with a warning), not refused', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'cronix-dd-')), 'data');
    mkdirSync(dataDir, { mode: 0o700 });
    writeFileSync(join(dataDir, 'token'), '', { mode: 0o600 });
    const s = await spawnServe(dir, 0, { dataDir });
    await stop(s);
    expect(s.token.length).toBeGreaterThanOrEqual(32);
    expect(s.output()).toContain('was empty');
  });
});

describe('--token-file', () => {
  it('readable by others (0644) is refused, with chmod 600 in the message', async () => {
    const work = mkdtempSync(join(tmpdir(), 'cronix-dd-'));
    const file = join(work, 'token');
    writeFileSync(file, 'a-token-of-enough-length-0123456789\n', { mode: 0o644 });
    chmodSync(file, 0o644);
    const r = await refused(['--token-file', file], join(work, 'data'));
    expect(r.code).toBe(1);
    expect(r.out).toContain(`token file ${file} is open to its group and other users (mode 0644)`);
    expect(r.out).toContain(`chmod 600 ${file}`);
    chmodSync(file, 0o640);
    const g = await refused(['--token-file', file], join(work, 'data'));
    expect(g.out).toContain('is open to its group (mode 0640)');
    chmodSync(file, 0o600);
    const s = await spawnServe(dir, 0, {
      args: ['--token-file', file],
      dataDir: join(work, 'data'),
      tokenFile: file,
    });
    await stop(s);
    expect(s.token).toBe('a-token-of-enough-length-0123456789');
  });

  it('missing: the message says how to create one', async () => {
    const work = mkdtempSync(join(tmpdir(), 'cronix-dd-'));
    const file = join(work, 'nope');
    const r = await refused(['--token-file', file], join(work, 'data'));
    expect(r.code).toBe(1);
    expect(r.out).toContain(
      `token file ${file} does not exist; create one with: head -c 24 /dev/urandom | base64 > ${file} && chmod 600 ${file}`,
    );
    // the command in the message works, and its file is accepted
    execFileSync('sh', ['-c', `head -c 24 /dev/urandom | base64 > ${file} && chmod 600 ${file}`]);
    const s = await spawnServe(dir, 0, {
      args: ['--token-file', file],
      dataDir: join(work, 'data'),
      tokenFile: file,
    });
    await stop(s);
  });
});

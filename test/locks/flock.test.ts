/**
 * Host-scope locks on real flock(2): the shared contract, real child processes
 * holding and dying with the lock, util-linux flock(1) as an independent
 * witness, and unusable lock directories.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { FlockBackend, LockConfigError } from '../../src/locks/index.js';
import { HOLDER_A, HOLDER_B, lockContract, mustAcquire } from './contract.js';
import { exited, tempDir, waitForLine } from './helpers.js';

const FIXTURE = fileURLToPath(new URL('./fixtures/hold-flock.mjs', import.meta.url));
const dirs: string[] = [];

function freshDir(): string {
  const dir = tempDir('flock');
  dirs.push(dir);
  return dir;
}

afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

lockContract('flock', async () => new FlockBackend(freshDir()));

describe('FlockBackend with real processes', () => {
  const children: ReturnType<typeof spawn>[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });

  function holdInChild(lockFile: string, holderFile?: string) {
    const args = [FIXTURE, lockFile, ...(holderFile === undefined ? [] : [holderFile])];
    const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    children.push(child);
    return child;
  }

  it('a lock held by another process is contended; SIGKILL frees it at once', async () => {
    const backend = new FlockBackend(freshDir());
    const child = holdInChild(backend.lockFile('app.job'), backend.holderFile('app.job'));
    await waitForLine(child, /^locked$/);

    const contended = await backend.acquire('app.job', { ttlMs: 1000, holder: HOLDER_A });
    expect(contended.ok).toBe(false);
    if (!contended.ok)
      expect(contended.holder).toMatchObject({ pid: child.pid, host: 'fixture-host' });

    child.kill('SIGKILL');
    await exited(child);
    const lease = await mustAcquire(backend, 'app.job', HOLDER_A);
    expect(await backend.holder('app.job')).toEqual(HOLDER_A);
    expect(await lease.release()).toBe(true);
    await backend.close();
  });

  it('a child cannot take a lock we hold, and can once we release it', async () => {
    const backend = new FlockBackend(freshDir());
    const lease = await mustAcquire(backend, 'app.job');
    const loser = holdInChild(backend.lockFile('app.job'));
    expect(await waitForLine(loser, /^contended/)).toMatch(/EAGAIN|EWOULDBLOCK/);
    await lease.release();
    const winner = holdInChild(backend.lockFile('app.job'));
    await waitForLine(winner, /^locked$/);
    await backend.close();
  });

  const hasFlock = spawnSync('flock', ['--version']).status === 0;
  it.runIf(hasFlock)('agrees with util-linux flock(1) both ways', async () => {
    const backend = new FlockBackend(freshDir());
    const file = backend.lockFile('app.job');
    const lease = await mustAcquire(backend, 'app.job');
    expect(spawnSync('flock', ['-n', file, 'true']).status).toBe(1);
    await lease.release();
    expect(spawnSync('flock', ['-n', file, 'true']).status).toBe(0);

    // -o: only flock(1) itself holds the lock, not its command; kill the group to clean up.
    const holder = spawn('flock', ['-n', '-o', file, '-c', 'echo locked; exec sleep 30'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    children.push(holder);
    await waitForLine(holder, /^locked$/);
    expect((await backend.acquire('app.job', { ttlMs: 1000, holder: HOLDER_A })).ok).toBe(false);
    process.kill(-(holder.pid ?? 0), 'SIGKILL');
    await exited(holder);
    await (await mustAcquire(backend, 'app.job')).release();
    await backend.close();
  });
});

describe('FlockBackend files', () => {
  it('creates missing parent dirs (0755), a 0644 lock file and an atomic holder sidecar', async () => {
    const dir = path.join(freshDir(), 'var', 'lock', 'cronix');
    const backend = new FlockBackend(dir);
    const lease = await mustAcquire(backend, 'billing.settle', HOLDER_B);
    expect(statSync(dir).mode & 0o777).toBe(0o755);
    expect(statSync(path.join(dir, 'billing.settle.lock')).mode & 0o777).toBe(0o644);
    expect(readdirSync(dir).sort()).toEqual(['billing.settle.holder', 'billing.settle.lock']);
    expect(JSON.parse(readFileSync(path.join(dir, 'billing.settle.holder'), 'utf8'))).toEqual({
      pid: HOLDER_B.pid,
      host: HOLDER_B.host,
      acquired_at: new Date(HOLDER_B.acquiredAt).toISOString(),
    });
    await lease.release();
    // The lock file stays (deleting it races); our holder record goes.
    expect(readdirSync(dir)).toEqual(['billing.settle.lock']);
    await backend.close();
  });

  it('reads an unparsable or foreign sidecar as no holder', async () => {
    const dir = freshDir();
    const backend = new FlockBackend(dir);
    writeFileSync(path.join(dir, 'app.job.holder'), '{"pid": "nope"');
    expect(await backend.holder('app.job')).toBeNull();
    writeFileSync(path.join(dir, 'app.job.holder'), '{"pid": 1, "host": "h", "acquired_at": 5}');
    expect(await backend.holder('app.job')).toEqual({ pid: 1, host: 'h', acquiredAt: 5 });
  });

  it('close() releases what is still held and refuses new acquisitions', async () => {
    const dir = freshDir();
    const backend = new FlockBackend(dir);
    const lease = await mustAcquire(backend, 'app.job');
    await backend.close();
    expect(await lease.release()).toBe(false);
    const other = new FlockBackend(dir);
    await (await mustAcquire(other, 'app.job', HOLDER_B)).release();
    await other.close();
    await expect(backend.acquire('app.job', { ttlMs: 1, holder: HOLDER_A })).rejects.toThrow(
      /closed/,
    );
  });
});

describe('FlockBackend with an unusable lock dir', () => {
  it('a dir under a regular file → LockConfigError naming path, errno and fix', async () => {
    const file = path.join(freshDir(), 'plain-file');
    writeFileSync(file, '');
    const dir = path.join(file, 'cronix');
    const err = await new FlockBackend(dir)
      .acquire('app.job', { ttlMs: 1000, holder: HOLDER_A })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockConfigError);
    expect((err as Error).message).toBe(
      `lock dir ${dir} is not usable (ENOTDIR: mkdir ${dir}); ` +
        'pass --lock-dir or set CRONIX_LOCK_DIR to a writable local directory',
    );
  });

  it('a dir the kernel refuses to create (/proc) → LockConfigError, without hanging', async () => {
    const dir = '/proc/cronix-nope/locks';
    const err = await new FlockBackend(dir)
      .acquire('app.job', { ttlMs: 1000, holder: HOLDER_A })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockConfigError);
    expect((err as Error).message).toMatch(
      /^lock dir \/proc\/cronix-nope\/locks is not usable \(ENOENT/,
    );
    expect((err as Error).message).toContain('CRONIX_LOCK_DIR');
    expect(existsSync('/proc/cronix-nope')).toBe(false);
  });

  it('a lock dir that is a regular file → LockConfigError', async () => {
    const file = path.join(freshDir(), 'not-a-dir');
    writeFileSync(file, '');
    await expect(
      new FlockBackend(file).acquire('app.job', { ttlMs: 1000, holder: HOLDER_A }),
    ).rejects.toThrow(new RegExp(`^lock dir ${file} is not usable \\(ENOTDIR`));
  });
});

/**
 * The daemon's log destination (src/io/batched-log.ts): the lines of one event-loop turn reach
 * the sink as one write, in order; a sync flush hands over what is pending first; a process
 * that exits in the turn it logged still writes those lines (a real child process, real pino).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { BatchedLog } from '../../src/io/batched-log.js';
import { REPO_ROOT } from '../helpers/cli.js';

function recording() {
  const writes: string[] = [];
  const flushed: number[] = [];
  return {
    writes,
    flushed,
    sink: {
      write: (s: string) => (writes.push(s), true),
      flushSync: () => void flushed.push(writes.length),
    },
  };
}

it('hands the lines of one turn over as one write, turn by turn, in order', async () => {
  const r = recording();
  const log = new BatchedLog(r.sink);
  for (let i = 0; i < 1000; i++) log.write(`{"n":${i}}\n`);
  expect(r.writes).toEqual([]); // nothing within the turn
  await new Promise((res) => setImmediate(res));
  expect(r.writes).toHaveLength(1);
  log.write('{"n":"next"}\n');
  await new Promise((res) => setImmediate(res));
  expect(r.writes).toHaveLength(2);
  const lines = r.writes.join('').trimEnd().split('\n');
  expect(lines).toHaveLength(1001);
  expect(lines.slice(0, 3)).toEqual(['{"n":0}', '{"n":1}', '{"n":2}']);
  expect(lines.at(-1)).toBe('{"n":"next"}');
});

it('flushSync hands over what is pending before the sink flushes', () => {
  const r = recording();
  const log = new BatchedLog(r.sink);
  log.write('a\n');
  log.write('b\n');
  log.flushSync();
  expect(r.writes).toEqual(['a\nb\n']);
  expect(r.flushed).toEqual([1]); // the sink flushed after it had the lines
});

it('a process that exits in the turn it logged still writes its lines', () => {
  const script = `
    import { pino } from 'pino';
    import { BatchedLog } from ${JSON.stringify(join(REPO_ROOT, 'src/io/batched-log.ts'))};
    const log = pino({ base: undefined }, new BatchedLog(pino.destination({ dest: 1, sync: false })));
    for (let i = 0; i < 500; i++) log.info({ i }, 'line');
    process.exit(3);
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(3);
  const lines = r.stdout
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { i: number });
  expect(lines.map((l) => l.i)).toEqual(Array.from({ length: 500 }, (_, i) => i));
});

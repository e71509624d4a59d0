/**
 * Control characters never reach a terminal raw (finding 13, SPEC §9 item 9): the pretty log of
 * `cronix serve` and `cronix logs` write ESC, C1, DEL and stray CRs as `\xHH`; `--raw` keeps the
 * bytes. Units for the escaper, real processes for the two commands.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prettyLine } from '../../src/io/pretty-log.js';
import { escapeControls, TerminalEscaper } from '../../src/io/terminal.js';
import { cronixAsync } from '../helpers/cli.js';
import { api, manifestDir, spawnServe, until } from '../helpers/serve.js';

/** Any control character but the line feed that ends a line. */
// eslint-disable-next-line no-control-regex
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

const HOSTILE = 'a\u001b[2Jb\u009b31mc\u007fd\re\nf\tg\u0000h\u001b]0;pwned\u0007';

describe('escapeControls', () => {
  it.each([
    ['\u001b[2J', 'line', '\\x1b[2J'],
    ['\u009b1m', 'line', '\\x9b1m'],
    ['del\u007f', 'line', 'del\\x7f'],
    ['a\nb\tc', 'line', 'a\\x0ab\\x09c'],
    ['a\nb\tc', 'lines', 'a\nb\tc'],
    ['dos\r\nline', 'lines', 'dos\r\nline'],
    ['over\rwrite', 'lines', 'over\\x0dwrite'],
    ['naïve ✓ 日本', 'line', 'naïve ✓ 日本'],
  ] as const)('%j (%s) → %j', (input, mode, out) => {
    expect(escapeControls(input, mode)).toBe(out);
  });

  it('streams: UTF-8 and CRLF split across chunks, a lone CR at the end', () => {
    const bytes = Buffer.from('é\r\nx\u001b\r');
    const e = new TerminalEscaper();
    const out = [...bytes].map((b) => e.push(Uint8Array.of(b))).join('') + e.end();
    expect(out).toBe('é\r\nx\\x1b\\x0d');
  });
});

describe('pretty log lines', () => {
  it('a record with control characters in its message, keys and values prints none', () => {
    const line = JSON.stringify({
      level: 'error',
      time: '2026-01-01T00:00:00.000Z',
      msg: `reload failed: ${HOSTILE}`,
      path: `jobs/0/${HOSTILE}`,
      [`k${HOSTILE}`]: 1,
      plain: 'x\u009by',
    });
    const out = prettyLine(line);
    expect(out.endsWith('\n')).toBe(true);
    expect(out.slice(0, -1)).not.toMatch(RAW_CONTROL);
    expect(out.slice(0, -1)).not.toContain('\n');
    expect(out).toContain('\\x1b[2J');
    expect(out).toContain('x\\x9by');
    expect(prettyLine(`not json ${HOSTILE}`).slice(0, -1)).not.toMatch(RAW_CONTROL);
  });
});

describe('real processes', () => {
  it('serve --log-format pretty: a manifest key with ESC in a reload error is escaped', async () => {
    const dir = manifestDir('esc', [
      { name: 'yearly', schedule: '0 0 1 1 *', request: { url: 'http://127.0.0.1:9/y' } },
    ]);
    const s = await spawnServe(dir, 0, { args: ['--log-format', 'pretty'] });
    const bad = {
      version: 1,
      app: 'esc',
      jobs: [{ name: 'yearly', schedule: '0 0 1 1 *', request: { url: 'http://127.0.0.1:9/y' } }],
      [`x\u001b]0;pwned\u0007\u009b2J`]: 1,
    };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(bad));
    // the daemon answers before the signal is sent: its loop is past start-up
    await until(async () => ((await fetch(`${s.url}/healthz`)).ok ? true : undefined), 20_000);
    s.child.kill('SIGHUP');
    await until(
      () => (s.output().includes('keeping the previous manifests') ? true : undefined),
      40_000,
    ).catch(() => {
      const state = `exit code ${s.child.exitCode}, signal ${s.child.signalCode}`;
      throw new Error(
        `no reload error logged within 40 s of SIGHUP (${state}); output:\n${s.output()}`,
      );
    });
    s.child.kill('SIGTERM');
    await s.exited;
    const lines = s.output().split('\n');
    const reload = lines.find((l) => l.includes('keeping the previous manifests')) ?? '';
    expect(reload).toContain('\\x1b]0;pwned\\x07\\x9b2J');
    for (const l of lines) expect(l).not.toMatch(RAW_CONTROL);
  }, 90_000);

  it('validate and a refused serve quote a hostile manifest key escaped', async () => {
    const dir = manifestDir('esc', []);
    const file = join(dir, 'manifest.json');
    writeFileSync(
      file,
      JSON.stringify({
        version: 1,
        app: 'esc',
        jobs: [{ name: 'a', schedule: '0 0 1 1 *', request: { url: 'http://127.0.0.1:9/y' } }],
        [`x\u001b]0;pwned\u0007\u009b2J`]: 1,
      }),
    );
    const v = await cronixAsync(['validate', file]);
    expect(v.status).toBe(1);
    expect(v.stdout).toContain('\\x1b]0;pwned\\x07\\x9b2J');
    expect(v.stdout + v.stderr).not.toMatch(RAW_CONTROL);
    const s = await cronixAsync([
      'serve',
      file,
      '--data-dir',
      join(dir, 'data'),
      '--listen',
      '127.0.0.1:0',
    ]);
    expect(s.status).toBe(1);
    expect(s.stderr).toContain('\\x1b]0;pwned\\x07\\x9b2J');
    expect(s.stdout + s.stderr).not.toMatch(RAW_CONTROL);
  });

  it('cronix logs escapes a command’s control characters; --raw keeps them', async () => {
    const dir = manifestDir('esc', []);
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify({
        version: 1,
        app: 'esc',
        jobs: [
          {
            name: 'task',
            schedule: '0 0 1 1 *',
            command: {
              argv: [
                '/bin/sh',
                '-c',
                "printf 'ok\\tline\\r\\n\\033[2J\\033]0;pwned\\007bar\\rX\\302\\233\\n'",
              ],
            },
            policy: { retries: { max_attempts: 1 } },
          },
        ],
      }),
    );
    const s = await spawnServe(dir, 0);
    const r = await api(s, 'POST', '/api/v1/jobs/esc/task/trigger');
    const id = (r.json['run'] as { id: string }).id;
    await until(async () =>
      (await api(s, 'GET', `/api/v1/runs/${id}`)).json['phase'] === 'ended' ? true : undefined,
    );
    const env = { ...process.env, CRONIX_URL: s.url, CRONIX_TOKEN: s.token };
    const shown = await cronixAsync(['logs', id], { env });
    const raw = await cronixAsync(['logs', id, '--raw'], { env });
    s.child.kill('SIGTERM');
    await s.exited;
    expect(shown.status).toBe(0);
    expect(shown.stdout).toBe('ok\tline\r\n\\x1b[2J\\x1b]0;pwned\\x07bar\\x0dX\\x9b\n');
    expect(raw.stdout).toBe('ok\tline\r\n\u001b[2J\u001b]0;pwned\u0007bar\rX\u009b\n');
  }, 30_000);
});

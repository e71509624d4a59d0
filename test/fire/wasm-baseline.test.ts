/**
 * The daemon's transport keeps undici's response parser (llhttp, WebAssembly) on V8's baseline
 * compiler: a process sends 3,000 requests through `createUndiciTransport` to a local server,
 * with V8 tracing every wasm compilation. Without `keepWasmOnBaseline` the parser's main function
 * is recompiled by TurboFan (~30 MB of compiler memory at a burst's start); with it, never.
 * The function is the largest wasm function of the process, told apart by its compile lines.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const TRANSPORT = fileURLToPath(new URL('../../src/fire/undici-transport.ts', import.meta.url));

/** What V8 compiled of WebAssembly while 3,000 requests went through the transport. */
async function wasmCompiles(
  baseline: boolean,
): Promise<{ size: number; liftoff: number; turbofan: number }> {
  const script = `
    import http from 'node:http';
    import { createUndiciTransport, keepWasmOnBaseline } from ${JSON.stringify(TRANSPORT)};
    if (${baseline}) keepWasmOnBaseline();
    const server = http.createServer((_, res) => res.end('ok')).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const transport = createUndiciTransport({ maxSockets: 4 });
    const url = 'http://127.0.0.1:' + server.address().port + '/';
    for (let i = 0; i < 3000; i++) {
      const r = await transport.send(
        { method: 'POST', url, headers: {}, body: '{}' },
        { timeoutMs: 10000, maxBodyBytes: 1024 },
      );
      if (r.kind !== 'response' || r.status !== 200) throw new Error(JSON.stringify(r));
    }
    // a tier-up runs in the background: let one started near the end finish and print
    await new Promise((r) => setTimeout(r, 1000));
    await transport.close();
    server.close();
  `;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--trace-wasm-compilation-times', '--import', 'tsx', '--input-type=module', '-e', script],
    { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
  );
  // `Compiled function 0x…#20 using Liftoff, took … bodysize 33670 …`, one line per compile
  const compiles = [...stdout.matchAll(/^Compiled function (\S+) using (\w+),.* bodysize (\d+)/gm)];
  // the parser's main function is the largest wasm function of the process (tsx's own lexer
  // is wasm too, compiled before the flag)
  const largest = compiles.reduce<RegExpMatchArray | undefined>(
    (a, m) => (a === undefined || Number(m[3]) > Number(a[3]) ? m : a),
    undefined,
  );
  const parser = largest?.[1] ?? '';
  const by = (compiler: string): number =>
    compiles.filter((m) => m[1] === parser && m[2] === compiler).length;
  return { size: Number(largest?.[3] ?? 0), liftoff: by('Liftoff'), turbofan: by('TurboFan') };
}

describe("the daemon transport's WebAssembly", () => {
  it('stays on Liftoff after keepWasmOnBaseline; without it, TurboFan recompiles the parser', async () => {
    const [kept, tiered] = await Promise.all([wasmCompiles(true), wasmCompiles(false)]);
    // the parser's main function (tens of KB of wasm) was compiled and run in both
    expect(kept.size).toBeGreaterThan(10_000);
    expect(kept).toMatchObject({ liftoff: 1, turbofan: 0 });
    expect(tiered).toMatchObject({ size: kept.size, liftoff: 1, turbofan: 1 });
  }, 60_000);
});

/**
 * Identifiers of a fire: the run id (UUIDv7, RFC 9562) and W3C trace context.
 * Written here rather than imported from `uuid` because loading that package
 * costs ~25 ms, a third of the shim's start-up budget, for ten lines of code.
 */
import { randomFillSync } from 'node:crypto';

/**
 * Random bytes from a pool refilled 4 KiB at a time: one system call per ~400
 * ids instead of one per id (10,000 fires in one second were spending ~200 ms
 * in `randomBytes`). Still the OS's CSPRNG.
 */
const pool = Buffer.allocUnsafe(4096);
let poolAt = pool.length;
function random(n: number): Uint8Array {
  if (poolAt + n > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  const out = pool.subarray(poolAt, poolAt + n);
  poolAt += n;
  return out;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

function hex(bytes: Uint8Array, from: number, to: number): string {
  let s = '';
  for (let i = from; i < to; i++) s += HEX[bytes[i] as number];
  return s;
}

/**
 * A UUIDv7: 48-bit Unix milliseconds, version 7, 74 random bits, RFC 9562
 * variant. Time-ordered at millisecond resolution.
 */
export function uuidv7(nowMs: number, rand: Uint8Array = random(10)): string {
  const b = new Uint8Array(16);
  let ms = Math.floor(nowMs);
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  b.set(rand.subarray(0, 10), 6);
  b[6] = 0x70 | ((b[6] as number) & 0x0f);
  b[8] = 0x80 | ((b[8] as number) & 0x3f);
  return `${hex(b, 0, 4)}-${hex(b, 4, 6)}-${hex(b, 6, 8)}-${hex(b, 8, 10)}-${hex(b, 10, 16)}`;
}

/** The Unix milliseconds encoded in a UUIDv7. */
export function uuidv7Time(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/**
 * W3C `traceparent` for one attempt: the trace id is the run id's 32 hex
 * digits (one trace per fire, across attempts), the span id is fresh.
 */
export function traceparent(runId: string, spanId: Uint8Array = random(8)): string {
  return `00-${runId.replace(/-/g, '')}-${hex(spanId, 0, 8)}-01`;
}

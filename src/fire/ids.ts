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

/** The two ASCII hex digits of every byte value, for writing ids into a byte buffer. */
const HEX_DIGITS = Buffer.from(
  Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0')).join(''),
  'latin1',
);

/**
 * Where an id's characters are written before becoming one flat string (ids are made
 * synchronously, one at a time): no string concatenation per hex pair, one string per id.
 */
const scratch = Buffer.alloc(64);

/** Writes `bytes[from..to)` as lowercase hex at `scratch[at..]`; returns the next position. */
function writeHex(bytes: Uint8Array, from: number, to: number, at: number): number {
  for (let i = from; i < to; i++) {
    const d = (bytes[i] as number) * 2;
    scratch[at++] = HEX_DIGITS[d] as number;
    scratch[at++] = HEX_DIGITS[d + 1] as number;
  }
  return at;
}

const DASH = 0x2d;
const uuidBytes = new Uint8Array(16);

/**
 * A UUIDv7: 48-bit Unix milliseconds, version 7, 74 random bits, RFC 9562
 * variant. Time-ordered at millisecond resolution.
 */
export function uuidv7(nowMs: number, rand: Uint8Array = random(10)): string {
  const b = uuidBytes;
  let ms = Math.floor(nowMs);
  for (let i = 5; i >= 0; i--) {
    b[i] = ms % 256;
    ms = Math.floor(ms / 256);
  }
  b.set(rand.subarray(0, 10), 6);
  b[6] = 0x70 | ((b[6] as number) & 0x0f);
  b[8] = 0x80 | ((b[8] as number) & 0x3f);
  let at = writeHex(b, 0, 4, 0);
  scratch[at++] = DASH;
  at = writeHex(b, 4, 6, at);
  scratch[at++] = DASH;
  at = writeHex(b, 6, 8, at);
  scratch[at++] = DASH;
  at = writeHex(b, 8, 10, at);
  scratch[at++] = DASH;
  at = writeHex(b, 10, 16, at);
  return scratch.toString('latin1', 0, at);
}

/** The Unix milliseconds encoded in a UUIDv7. */
export function uuidv7Time(id: string): number {
  return parseInt(id.slice(0, 8) + id.slice(9, 13), 16);
}

/** A run id as this module makes them (the fast path of {@link traceparent} writes its bytes). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function spanHex(spanId: Uint8Array): string {
  return scratch.toString('latin1', 0, writeHex(spanId, 0, 8, 0));
}

/**
 * W3C `traceparent` for one attempt: the trace id is the run id's 32 hex
 * digits (one trace per fire, across attempts), the span id is fresh.
 */
export function traceparent(runId: string, spanId: Uint8Array = random(8)): string {
  if (!UUID.test(runId)) return `00-${runId.replace(/-/g, '')}-${spanHex(spanId)}-01`;
  // `00-<run id without dashes>-<span id>-01`, written into the scratch buffer
  scratch[0] = 0x30;
  scratch[1] = 0x30;
  scratch[2] = DASH;
  let at = 3;
  for (let i = 0; i < runId.length; i++) {
    const c = runId.charCodeAt(i);
    if (c !== DASH) scratch[at++] = c;
  }
  scratch[at++] = DASH;
  at = writeHex(spanId, 0, 8, at);
  scratch[at++] = DASH;
  scratch[at++] = 0x30;
  scratch[at++] = 0x31;
  return scratch.toString('latin1', 0, at);
}

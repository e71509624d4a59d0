/**
 * Runs every vector of the public cronix v1 auth conformance file
 * (test/conformance/auth-vectors.json) against our signer and verifier.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { sign, verify } from '../../src/contract/signature.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const vectorsPath = path.resolve(repoRoot, 'test/conformance/auth-vectors.json');

interface SignVector {
  kind: 'sign';
  name: string;
  secret: string;
  method: string;
  path: string;
  bodyB64: string;
  timestamp: number;
  expectedHeader: string;
}

interface VerifyVector {
  kind: 'verify';
  name: string;
  secrets: string[];
  method: string;
  path: string;
  bodyB64: string;
  header: string;
  now: number;
  maxSkewSeconds?: number;
  expect: 'ok' | 'MissingSignature' | 'MalformedHeader' | 'StaleTimestamp' | 'SignatureMismatch';
  expectedSecretIndex?: number;
}

const file = JSON.parse(readFileSync(vectorsPath, 'utf8')) as {
  version: number;
  vectors: (SignVector | VerifyVector)[];
};
const signVectors = file.vectors.filter((v): v is SignVector => v.kind === 'sign');
const verifyVectors = file.vectors.filter((v): v is VerifyVector => v.kind === 'verify');

const body = (b64: string): Uint8Array => new Uint8Array(Buffer.from(b64, 'base64'));

describe('auth conformance vectors', () => {
  it('loads the full vector file', () => {
    expect(file.version).toBe(1);
    expect(file.vectors).toHaveLength(35);
    expect(signVectors.length + verifyVectors.length).toBe(35);
  });

  it.each(signVectors.map((v) => [v.name, v] as const))('%s', (_name, v) => {
    const header = sign({
      secret: v.secret,
      method: v.method,
      path: v.path,
      body: body(v.bodyB64),
      timestamp: v.timestamp,
    });
    expect(header).toBe(v.expectedHeader);
  });

  it.each(verifyVectors.map((v) => [v.name, v] as const))('%s', (_name, v) => {
    const result = verify({
      header: v.header,
      secrets: v.secrets,
      method: v.method,
      path: v.path,
      body: body(v.bodyB64),
      now: v.now,
      ...(v.maxSkewSeconds === undefined ? {} : { maxSkewSeconds: v.maxSkewSeconds }),
    });
    if (v.expect === 'ok') {
      expect(result).toEqual({
        ok: true,
        secretIndex: v.expectedSecretIndex,
        timestamp: expect.any(Number) as number,
      });
    } else {
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.code).toBe(v.expect);
    }
    if (!result.ok) {
      for (const secret of v.secrets) expect(result.message).not.toContain(secret);
    }
  });
});

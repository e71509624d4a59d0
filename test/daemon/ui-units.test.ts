/**
 * Units of the web UI's server side: session cookies (expiry, forgery,
 * revocation, a new token), the event hub's ring (eviction → reset), and the
 * redaction of manifest credentials.
 */
import { describe, expect, it } from 'vitest';
import { DaemonEmitter } from '../../src/daemon/events.js';
import { EventHub } from '../../src/http/events.js';
import { headerShown, redactHeaders, redactUrl } from '../../src/http/redact.js';
import { Sessions, SESSION_SECONDS } from '../../src/http/session.js';
import { newRun } from './store-fixtures.js';

describe('Sessions', () => {
  it('verifies its own cookies until they expire; forged, revoked or other-token cookies fail', () => {
    let now = 1_800_000_000_000;
    const s = new Sessions('token-0123456789abcdef', () => now);
    const { cookie, csrf } = s.create();
    expect(s.verify(cookie)?.csrf).toBe(csrf);
    expect(s.verify(cookie.slice(0, -1) + (cookie.endsWith('A') ? 'B' : 'A'))).toBeNull();
    expect(s.verify(undefined)).toBeNull();
    expect(s.verify('v1.9999999999.x.y')).toBeNull();
    expect(new Sessions('another-token-0123456789', () => now).verify(cookie)).toBeNull();
    const other = s.create();
    s.revoke(other.cookie);
    expect(s.verify(other.cookie)).toBeNull();
    expect(s.verify(cookie)).not.toBeNull();
    now += SESSION_SECONDS * 1000 + 1;
    expect(s.verify(cookie)).toBeNull();
    expect(s.tokenMatches('token-0123456789abcdef')).toBe(true);
    expect(s.tokenMatches('token-0123456789abcdeF')).toBe(false);
    expect(s.bearer('Bearer token-0123456789abcdef')).toBe(true);
    expect(s.bearer('token-0123456789abcdef')).toBe(false);
  });
});

describe('EventHub', () => {
  async function firstEvents(res: Response, n: number): Promise<string[]> {
    const reader = res.body!.getReader();
    let text = '';
    while (text.split('\n\n').length <= n) {
      const { value } = await reader.read();
      text += new TextDecoder().decode(value);
    }
    await reader.cancel();
    return text.split('\n\n').slice(0, n);
  }

  it('replays from its ring, and says reset once an id has been evicted', async () => {
    const events = new DaemonEmitter();
    const hub = new EventHub(events, { bufferSize: 3 });
    const run = { ...newRun(), seq: 1 };
    for (let i = 0; i < 5; i++) events.emit('run-ended', run);
    const boot = hub.boot;
    const resumed = await firstEvents(hub.stream(`${boot}.3`, {}), 4);
    expect(resumed.slice(1, 3).map((e) => e.split('\n')[0])).toEqual([
      `id: ${boot}.4`,
      `id: ${boot}.5`,
    ]);
    expect(resumed[3]).toContain('event: ready');
    const evicted = await firstEvents(hub.stream(`${boot}.1`, {}), 2);
    expect(evicted[1]).toBe('event: reset\ndata: {}');
    const fresh = await firstEvents(hub.stream(undefined, {}), 2);
    expect(fresh[1]).toContain('event: ready');
    expect(hub.size).toBe(0);
    hub.close();
    expect(events.listenerCount('run-ended')).toBe(0);
  });
});

describe('redaction (an allowlist: values are hidden unless their name describes the request)', () => {
  it('header values are shown only for allowlisted names; secret headers always hidden', () => {
    expect(
      redactHeaders(
        {
          'X-Team': 'ops',
          Authorization: 'Bearer x',
          'x-api-key': 'k',
          'X-Upstream-Key': 'u',
          'X-Auth-Key': 'a',
          'X-Access-Key': 'b',
          'X-Private-Key': 'c',
          'Ocp-Apim-Subscription-Key': 'd',
          'X-Auth': 'e',
          'Content-Type': 'application/json',
          accept: 'text/plain',
          'User-Agent': 'cron/1',
        },
        { 'X-From-Vault': 'env:VAULT', 'User-Agent': 'env:UA' },
      ),
    ).toEqual({
      Authorization: '(hidden)',
      'Content-Type': 'application/json',
      'Ocp-Apim-Subscription-Key': '(hidden)',
      'User-Agent': '(hidden)', // from a secret: hidden whatever its name
      'X-Access-Key': '(hidden)',
      'X-Auth': '(hidden)',
      'X-Auth-Key': '(hidden)',
      'X-From-Vault': '(hidden)',
      'X-Private-Key': '(hidden)',
      'X-Team': '(hidden)',
      'X-Upstream-Key': '(hidden)',
      accept: 'text/plain',
      'x-api-key': '(hidden)',
    });
    expect(headerShown('CONTENT-TYPE')).toBe(true);
    expect(headerShown('Cookie')).toBe(false);
    expect(redactHeaders({ constructor: 'x' })).toEqual({ constructor: '(hidden)' });
  });

  it('query values are shown only for allowlisted names; user info and fragment hidden', () => {
    expect(redactUrl('https://u:p@h.example/x?token=1&page=2&key=k&auth=a&Limit=5#frag')).toBe(
      'https://hidden:hidden@h.example/x?token=hidden&page=2&key=hidden&auth=hidden&Limit=5#hidden',
    );
    expect(redactUrl('https://h.example/plain')).toBe('https://h.example/plain');
    expect(redactUrl('not a url')).toBe('(hidden)');
  });
});

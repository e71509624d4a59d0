/**
 * Single sign-on in a real browser (SPEC §18) against a real OpenID Connect provider started
 * here (`oidc-provider`, test/helpers/oidc-provider.ts): the login page offers SSO beside the
 * token; the authorization request carries state, nonce and an S256 PKCE challenge; a user of
 * group `ops` comes back signed in as an operator, pauses a job in the UI — audited `from: ui`
 * under the user's name, shown on the Audit page — and cannot manage tokens. Refused: an ID
 * token for another audience, an expired one, one with a forged signature, a replayed state, a
 * user with no mapped group; each leaves no session, and the log names the reason without the
 * code or token tried.
 */
import type { Browser, BrowserContext } from 'playwright-core';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRoleMap } from '../../src/http/sso.js';
import { startDaemon, type DaemonHandle } from '../../src/http/serve.js';
import { freePort } from '../helpers/common.js';
import { startProvider, type TestProvider } from '../helpers/oidc-provider.js';
import { startSink, type Sink } from '../helpers/sink.js';
import { launchBrowser, newContext, screenshot, watch } from './harness.js';

let browser: Browser;
let provider: TestProvider;
let daemon: DaemonHandle;
let sink: Sink;
const warnings: string[] = [];

beforeAll(async () => {
  sink = await startSink();
  const dir = mkdtempSync(join(tmpdir(), 'cronix-sso-'));
  writeFileSync(
    join(dir, 'm.json'),
    JSON.stringify({
      version: 1,
      app: 'shop',
      jobs: [
        {
          name: 'report',
          schedule: '0 0 1 1 *',
          request: { url: `${sink.url}/report` },
          auth: { secret_refs: ['env:SSO_SECRET'] },
        },
      ],
    }),
  );
  const port = await freePort();
  daemon = await startDaemon({
    manifests: [join(dir, 'm.json')],
    dataDir: join(dir, 'data'),
    listen: '127.0.0.1:0',
    env: { SSO_SECRET: 'sso-test-secret-0123456789' },
    onEvents: (e) => e.on('warning', (w) => warnings.push(w.msg)),
    sso: {
      issuer: `http://127.0.0.1:${port}`,
      clientId: 'cronix-ui',
      roleClaim: 'groups',
      roleMap: parseRoleMap(['ops=operator', 'platform=admin', 'staff=viewer']) as Map<
        string,
        'viewer' | 'operator' | 'admin'
      >,
    },
  });
  provider = await startProvider(port, 'cronix-ui', `${daemon.url}/api/v1/sso/callback`);
  provider.groups.set('alice', ['staff', 'ops']);
  provider.groups.set('mallory', ['visitors']);
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await daemon?.stop(1000);
  await provider?.close();
  await sink?.close();
});

/** Clicks "Sign in with SSO", logs in at the provider as `user`; resolves on the way back. */
async function ssoLogin(context: BrowserContext, user: string) {
  const w = await watch(context);
  const callbacks: string[] = [];
  const authorizations: string[] = [];
  w.page.on('request', (r) => {
    if (r.url().includes('/api/v1/sso/callback')) callbacks.push(r.url());
    if (r.url().startsWith(`${provider.issuer}/auth`)) authorizations.push(r.url());
  });
  await w.page.goto(`${daemon.url}/`);
  await w.page.getByRole('link', { name: 'Sign in with SSO' }).click();
  await w.page.locator('input[name="login"]').fill(user);
  await w.page.locator('input[name="password"]').fill('any password');
  await w.page.getByRole('button', { name: 'Sign-in' }).click();
  await w.page.waitForURL((u) => u.href.startsWith(daemon.url), { timeout: 20_000 });
  await w.page.waitForLoadState('load');
  return { w, callbacks, authorizations };
}

const cookieNames = async (context: BrowserContext): Promise<string[]> =>
  (await context.cookies(daemon.url)).map((c) => c.name);

describe('single sign-on', () => {
  it('a user of group ops signs in as operator, pauses a job (audited from ui), sees the Audit page', async () => {
    const context = await newContext(browser);
    const { w, authorizations } = await ssoLogin(context, 'alice');
    const auth = new URL(authorizations[0] as string);
    expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
    expect(auth.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(auth.searchParams.get('state')).toBeTruthy();
    expect(auth.searchParams.get('nonce')).toBeTruthy();
    expect(auth.searchParams.get('client_id')).toBe('cronix-ui');
    await w.page.getByText('alice').first().waitFor();
    expect(await w.page.locator('header .who').innerText()).toBe('alice (operator)');
    const cookie = (await context.cookies(daemon.url)).find((c) => c.name === 'cronix_session');
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Strict');

    await w.page.goto(`${daemon.url}/jobs/shop/report`);
    await w.page.getByRole('button', { name: 'Pause' }).click();
    await w.page.getByRole('dialog').getByRole('button', { name: 'Pause the job' }).click();
    await w.page.getByRole('button', { name: 'Resume' }).waitFor({ timeout: 10_000 });

    // the operator cannot manage tokens: the API says which role it needs
    const tokens = await w.page.evaluate(async () => (await fetch('/api/v1/tokens')).json());
    expect(JSON.stringify(tokens)).toContain(
      'needs the admin role; user \\"alice\\" has the operator role',
    );

    await w.page.getByRole('link', { name: 'Audit' }).click();
    const row = w.page.locator('table.audit tbody tr').filter({ hasText: 'pause' }).first();
    await row.waitFor();
    const text = await row.innerText();
    expect(text).toContain('alice');
    expect(text).toContain('shop/report');
    expect(text).toContain('ui');
    expect(text).toContain('ok 200');
    await screenshot(w.page, 'sso-audit');
    const audit = await fetch(`${daemon.url}/api/v1/audit?who=alice`, {
      headers: { authorization: `Bearer ${daemon.token}` },
    });
    const rows = ((await audit.json()) as { audit: Record<string, unknown>[] }).audit;
    expect(rows.map((r) => [r['action'], r['who_kind'], r['role'], r['from']])).toEqual([
      ['pause', 'user', 'operator', 'ui'],
      ['login.sso', 'user', 'operator', 'ui'],
    ]);
    // expected: the 403 of the tokens read above, and the provider's login page (not ours)
    // importing a web font from the internet, which this machine does not reach
    expect(
      w.consoleErrors.filter(
        (e) => !e.includes('status of 403') && !e.includes('ERR_NAME_NOT_RESOLVED'),
      ),
      w.consoleErrors.join('\n'),
    ).toEqual([]);
    await context.close();
  });

  it('a replayed state is refused, whatever the browser holds', async () => {
    const context = await newContext(browser);
    const { w, callbacks } = await ssoLogin(context, 'alice');
    await w.page.locator('header .who').waitFor();
    const used = new URL(callbacks[0] as string);
    // the same callback again, with the login cookie put back as it was
    await context.addCookies([
      { name: 'cronix_sso', value: used.searchParams.get('state') as string, url: daemon.url },
    ]);
    const again = await w.page.goto(used.href);
    expect(again?.status()).toBe(401);
    expect(await w.page.innerText('body')).toContain('already used (a replayed state)');
    // and a callback whose state is not the one this browser began with
    const other = await newContext(browser);
    const page = await other.newPage();
    const foreign = await page.goto(used.href);
    expect(foreign?.status()).toBe(401);
    expect(await page.innerText('body')).toContain('not begun in this browser');
    expect(await cookieNames(other)).not.toContain('cronix_session');
    await other.close();
    await context.close();
  });

  it('a user whose groups map to no role is refused with 403, and the token login stays', async () => {
    const context = await newContext(browser);
    const { w } = await ssoLogin(context, 'mallory');
    expect(await w.page.innerText('body')).toContain('has no role here');
    expect(await cookieNames(context)).not.toContain('cronix_session');
    await w.page.goto(`${daemon.url}/`);
    await w.page.getByLabel('API token').fill(daemon.token as string);
    await w.page.getByRole('button', { name: 'Log in' }).click();
    expect(await w.page.locator('header .who').innerText()).toBe('default (admin)');
    await context.close();
  });

  for (const [name, tamper, reason] of [
    [
      'an ID token for another audience',
      { claims: (p) => ({ ...p, aud: 'another-client' }) },
      'aud',
    ],
    [
      'an expired ID token',
      {
        claims: (p) => ({
          ...p,
          iat: Math.floor(Date.now() / 1000) - 900,
          exp: Math.floor(Date.now() / 1000) - 600,
        }),
      },
      'exp',
    ],
    ['an ID token with a forged signature', { forge: true }, 'signature'],
  ] as const satisfies readonly (readonly [string, TestProvider['tamper'], string])[]) {
    it(`${name} is refused: no session`, async () => {
      provider.tamper = tamper;
      const before = warnings.length;
      try {
        const context = await newContext(browser);
        const { w } = await ssoLogin(context, 'alice');
        expect(await w.page.innerText('body')).toContain('single sign-on refused');
        expect(await cookieNames(context)).not.toContain('cronix_session');
        const me = await w.page.evaluate(async () => (await fetch('/api/v1/session')).json());
        expect(me).toMatchObject({ authenticated: false, who: null });
        await context.close();
      } finally {
        provider.tamper = null;
      }
      const logged = warnings.slice(before).filter((m) => m.includes('failed SSO login'));
      expect(logged).toHaveLength(1);
      expect(logged[0]).toContain(reason);
      expect(logged[0]).toContain('the value tried is not logged');
      expect(logged[0]).not.toMatch(/code=|eyJ/);
    });
  }
});

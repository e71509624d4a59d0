/**
 * Login in a real browser (SPEC §13): a wrong token is refused and sets no
 * cookie; the right one gives an HttpOnly, SameSite=Strict session cookie that
 * page scripts cannot read; a mutation without the session's CSRF token, or
 * from another origin, changes nothing; logging out ends the session (also when it
 * happens in another tab: the login comes back by itself); with --no-auth there is no
 * login at all.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  foreignRequests,
  launchBrowser,
  login,
  newContext,
  screenshot,
  startUiDaemon,
  watch,
  type UiDaemon,
} from './harness.js';

let d: UiDaemon;
let browser: Browser;

beforeAll(async () => {
  d = await startUiDaemon();
  browser = await launchBrowser();
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await d?.stop();
});

describe('web UI login', () => {
  it('says where the token is, and the command that prints it, before any attempt', async () => {
    const context = await newContext(browser);
    const w = await watch(context);
    await w.page.goto(`${d.url}/`);
    await w.page.getByLabel('API token').waitFor();
    const help = await w.page.locator('main.login').innerText();
    expect(help).toContain('<data-dir>/token');
    expect(help).toContain('cat .cronix/token');
    expect(help).toContain('--token-file');
    expect(await w.page.getByRole('alert').count()).toBe(0);
    // the field points at the help, so a screen reader reads it with the field
    const described = await w.page.getByLabel('API token').getAttribute('aria-describedby');
    const helpText = await w.page.locator(`#${described}`).innerText();
    expect(helpText).toContain('cat .cronix/token');
    expect(w.consoleErrors).toEqual([]);
    await context.close();
  });

  it('a wrong token is refused with a message; no cookie is set', async () => {
    const context = await newContext(browser);
    const w = await watch(context);
    await w.page.goto(`${d.url}/jobs`);
    await w.page.getByLabel('API token').fill('not-the-token-0123456789');
    await w.page.getByRole('button', { name: 'Log in' }).click();
    const alert = w.page.getByRole('alert');
    await alert.waitFor();
    expect(await alert.innerText()).toContain('That token is not right');
    expect(await context.cookies()).toEqual([]);
    expect(await w.page.getByRole('heading', { name: 'Jobs' }).count()).toBe(0);
    await screenshot(w.page, 'login-wrong-token');
    // the only console message is the browser's note of the 401 itself
    expect(w.consoleErrors.every((e) => /status of 401/.test(e))).toBe(true);
    expect(foreignRequests(w, d.url)).toEqual([]);
    await context.close();
  });

  it('the right token gives an HttpOnly SameSite=Strict session that survives a reload', async () => {
    const context = await newContext(browser);
    const w = await watch(context);
    await w.page.goto(`${d.url}/`);
    await screenshot(w.page, 'login');
    await login(w.page, d.url, d.token);
    const [cookie] = await context.cookies();
    expect(cookie).toMatchObject({
      name: 'cronix_session',
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
    });
    expect(cookie!.value).not.toContain(d.token);
    expect(await w.page.evaluate(() => document.cookie)).toBe('');
    expect(await w.page.content()).not.toContain(d.token);
    await w.page.reload();
    await w.page.getByRole('heading', { name: 'Overview' }).waitFor();
    expect(await w.page.getByLabel('API token').count()).toBe(0);

    // a mutation with the cookie but without the CSRF token is refused
    const res = await w.page.evaluate(async () => {
      const r = await fetch('/api/v1/jobs/shop/report/pause', { method: 'POST' });
      return { status: r.status, body: await r.json() };
    });
    expect(res).toMatchObject({ status: 403, body: { error: { code: 'forbidden' } } });
    expect((await d.api('GET', '/api/v1/jobs/shop/report')).json.paused).toBe(false);

    // a page of another origin (localhost is not 127.0.0.1) cannot use the session
    const other = d.url.replace('127.0.0.1', 'localhost');
    await w.page.goto(`${other}/healthz`);
    const cross = await w.page.evaluate(async (target) => {
      try {
        await fetch(`${target}/api/v1/jobs/shop/report/pause`, {
          method: 'POST',
          credentials: 'include',
          mode: 'no-cors',
          headers: { 'content-type': 'text/plain' },
          body: '{}',
        });
        return 'sent';
      } catch (err) {
        return String(err);
      }
    }, d.url);
    expect(cross).toBe('sent');
    expect((await d.api('GET', '/api/v1/jobs/shop/report')).json.paused).toBe(false);

    // logging out ends the session, also for the old cookie
    await w.page.goto(`${d.url}/`);
    const old = (await context.cookies())[0]!.value;
    await w.page.getByRole('button', { name: 'Log out' }).click();
    await w.page.getByLabel('API token').waitFor();
    expect(await context.cookies()).toEqual([]);
    const replayed = await fetch(`${d.url}/api/v1/session`, {
      headers: { cookie: `cronix_session=${old}` },
    });
    expect((await replayed.json()).authenticated).toBe(false);
    // only the browser's notes of the two refusals this test provoked on purpose
    expect(w.consoleErrors.length).toBeLessThanOrEqual(2);
    expect(w.consoleErrors.every((e) => /status of 40[13]/.test(e))).toBe(true);
    await context.close();
  });

  it('a session ended elsewhere brings the login back by itself; the pages need it to read', async () => {
    const context = await newContext(browser);
    const w = await watch(context);
    await w.page.goto(`${d.url}/jobs`);
    await login(w.page, d.url, d.token);
    await w.page
      .getByRole('status')
      .filter({ hasText: /^Live$/ })
      .waitFor();
    const cookie = (await context.cookies())[0]!;
    // the same session logs out from another tab: its event stream ends, the next one is refused
    const out = await fetch(`${d.url}/api/v1/session`, {
      method: 'DELETE',
      headers: { cookie: `${cookie.name}=${cookie.value}` },
    });
    expect(out.status).toBe(200);
    await w.page.getByLabel('API token').waitFor();
    expect(await w.page.getByRole('heading', { name: 'Jobs' }).count()).toBe(0);
    // reads with the ended session are refused
    const read = await w.page.evaluate(async () => (await fetch('/api/v1/jobs')).status);
    expect(read).toBe(401);
    expect(w.consoleErrors.every((e) => /status of 401/.test(e))).toBe(true);
    await context.close();
  });

  it('with --no-auth there is no login and no cookie', async () => {
    const open = await startUiDaemon({ noAuth: true });
    try {
      const context = await newContext(browser);
      const w = await watch(context);
      await w.page.goto(`${open.url}/`);
      await w.page.getByRole('heading', { name: 'Overview' }).waitFor();
      expect(await w.page.getByLabel('API token').count()).toBe(0);
      expect(await w.page.getByRole('button', { name: 'Log out' }).count()).toBe(0);
      await w.page.goto(`${open.url}/jobs/shop/report`);
      await w.page.getByRole('button', { name: 'Run now' }).click();
      await w.page
        .getByRole('status')
        .filter({ hasText: /Started run/ })
        .waitFor();
      expect(await context.cookies()).toEqual([]);
      expect(w.consoleErrors).toEqual([]);
      await context.close();
    } finally {
      await open.stop();
    }
  });
});

/**
 * `serve --oidc-*` (SPEC §18): the flags are checked before anything starts — each problem a
 * usage error naming the flag and the value — and the claim → role mapping takes the highest
 * role among a user's values.
 */
import { expect, it } from 'vitest';
import { ssoOptions } from '../../src/cli/commands/sso-options.js';
import { parseRoleMap, roleFromClaim } from '../../src/http/sso.js';

const ok = {
  oidcIssuer: 'https://login.example.com/realms/main',
  oidcClientId: 'cronix',
  oidcRoleClaim: 'groups',
  oidcRoleMap: ['sre=operator', 'platform=admin'],
};

it('a complete configuration, with the client secret read from its ref', () => {
  const r = ssoOptions(
    { ...ok, oidcClientSecretRef: 'env:OIDC_SECRET' },
    { OIDC_SECRET: 's3cret-value' },
  );
  expect(r).toEqual({
    sso: {
      issuer: 'https://login.example.com/realms/main',
      clientId: 'cronix',
      clientSecret: 's3cret-value',
      roleClaim: 'groups',
      roleMap: new Map([
        ['sre', 'operator'],
        ['platform', 'admin'],
      ]),
    },
  });
  expect(ssoOptions({})).toEqual({});
});

it('each mistake is a usage error naming the flag', () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ oidcClientId: 'x' }, 'the --oidc-* flags need --oidc-issuer URL'],
    [{ ...ok, oidcIssuer: 'login.example.com' }, '--oidc-issuer: expected'],
    [{ ...ok, oidcIssuer: 'http://login.example.com' }, 'reached over https://'],
    [{ ...ok, oidcClientId: undefined }, '--oidc-issuer needs --oidc-client-id'],
    [{ ...ok, oidcRoleClaim: undefined }, '--oidc-issuer needs --oidc-role-claim'],
    [{ ...ok, oidcRoleMap: [] }, '--oidc-role-map: give at least one value=role'],
    [
      { ...ok, oidcRoleMap: ['sre=root'] },
      '--oidc-role-map: expected value=viewer|operator|admin, found "sre=root"',
    ],
    [{ ...ok, oidcClientSecretRef: 'env:MISSING' }, '--oidc-client-secret-ref env:MISSING:'],
  ];
  for (const [flags, message] of cases) {
    const r = ssoOptions(flags, {});
    expect('error' in r ? r.error : '', JSON.stringify(flags)).toContain(message);
  }
  // a provider on this host may be plain http (tests, a local Dex)
  expect(ssoOptions({ ...ok, oidcIssuer: 'http://127.0.0.1:5556/dex' }, {})).toHaveProperty('sso');
});

it('the role is the highest mapped value of the claim; none mapped is no role', () => {
  const map = parseRoleMap(['staff=viewer', 'sre=operator', 'root=admin', 'a=b=operator']);
  if (typeof map === 'string') throw new Error(map);
  expect(map.get('a=b')).toBe('operator');
  expect(roleFromClaim(['staff', 'sre'], map)).toBe('operator');
  expect(roleFromClaim(['sre', 'root', 'staff'], map)).toBe('admin');
  expect(roleFromClaim('staff', map)).toBe('viewer');
  expect(roleFromClaim(['visitors', 42], map)).toBeNull();
  expect(roleFromClaim(undefined, map)).toBeNull();
});

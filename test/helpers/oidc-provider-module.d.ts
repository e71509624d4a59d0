/** The little of `oidc-provider` (no bundled types) the SSO tests use. */
declare module 'oidc-provider' {
  import type { Server } from 'node:http';

  interface KoaContext {
    path: string;
    body: unknown;
  }

  export default class Provider {
    constructor(issuer: string, configuration: object);
    use(middleware: (ctx: KoaContext, next: () => Promise<void>) => Promise<void>): void;
    listen(port: number, host: string, ready: () => void): Server;
  }
}

/**
 * Registers the access commands (SPEC §18): `cronix tokens create|list|revoke` and
 * `cronix audit`, API clients like `jobs` (see `commands/access.ts`).
 */
import type { Command } from 'commander';
import { client, out, tokenFile, url, type ClientFlags } from './client-options.js';

const collect = (value: string, previous: string[]): string[] => [...previous, value];
const withClient = (c: Command): Command =>
  c.addOption(out()).addOption(url()).addOption(tokenFile());

/** Adds `tokens` and `audit` to `program`. */
export function registerAccessCommands(program: Command): void {
  const tokens = program
    .command('tokens')
    .description('named API tokens with roles (admin); exit 0 done, 1 refused, 2 usage');
  withClient(
    tokens
      .command('create')
      .description('create a token and print it once (only its hash is kept)')
      .argument('<name>', 'the name the audit log shows')
      .option('--role <role>', 'viewer, operator or admin')
      .option('--app <app>', 'limit it to this app (repeatable; not for admin)', collect, [])
      .option('--expires <instant>', 'refused after this RFC 3339 instant'),
  ).action(
    async (name: string, f: ClientFlags & { role?: string; app: string[]; expires?: string }) => {
      const { tokensCreateCommand } = await import('./commands/access.js');
      process.exitCode = await tokensCreateCommand(client(f), name, f);
    },
  );
  withClient(tokens.command('list').description('every token (never its value)')).action(
    async (f: ClientFlags) => {
      const { tokensListCommand } = await import('./commands/access.js');
      process.exitCode = await tokensListCommand(client(f));
    },
  );
  withClient(
    tokens
      .command('revoke')
      .description('revoke a token: refused at once, for good')
      .argument('<name>', 'token name'),
  ).action(async (name: string, f: ClientFlags) => {
    const { tokensRevokeCommand } = await import('./commands/access.js');
    process.exitCode = await tokensRevokeCommand(client(f), name);
  });

  withClient(
    program
      .command('audit')
      .description('the audit log, newest first: who did what, from where, how it ended')
      .option('--who <name>', 'token name or SSO user')
      .option('--action <verb>', 'trigger, pause, token.create, login…')
      .option('--job <app/job>', 'only this app (app) or job (app/job)')
      .option('--since <instant>', 'RFC 3339: rows at or after it')
      .option('--limit <n>', '1..1000 (default 100)'),
  ).action(
    async (
      f: ClientFlags & {
        who?: string;
        action?: string;
        job?: string;
        since?: string;
        limit?: string;
      },
    ) => {
      const { auditCommand } = await import('./commands/access.js');
      process.exitCode = await auditCommand(client(f), f);
    },
  );
}

/**
 * The options every API client command shares (`-o`, `--url`, `--token-file`) and how they
 * become the client's settings: one definition for the daemon, runbook and other client commands.
 */
import { Option } from 'commander';
import { outputFormat } from './output.js';

/** `-o, --output table|json`. */
export const out = (): Option =>
  new Option('-o, --output <format>', 'output format: table or json').default('table');
/** `--url`: the daemon to talk to. */
export const url = (): Option =>
  new Option('--url <url>', 'daemon URL (default $CRONIX_URL or http://127.0.0.1:7070)');
/** `--token-file`: the API token. */
export const tokenFile = (): Option =>
  new Option('--token-file <file>', 'API token file (default $CRONIX_TOKEN, else .cronix/token)');

/** The shared flags as commander parsed them. */
export interface ClientFlags {
  output: string;
  url?: string;
  tokenFile?: string;
}

/** The client settings of the shared flags. */
export const client = (f: ClientFlags) => ({
  output: outputFormat(f.output),
  ...(f.url ? { url: f.url } : {}),
  ...(f.tokenFile ? { tokenFile: f.tokenFile } : {}),
});

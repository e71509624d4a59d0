/**
 * The shipped JSON Schema of the manifest (`schema/manifest.schema.json`), generated from the
 * TypeBox schema so editors and the parser share one source of truth. `scripts/gen-schema.ts`
 * writes it; a test fails when the shipped file is stale.
 */
import { ManifestSchema } from './schema.js';

/** `$id` of the v1 manifest schema. */
export const MANIFEST_SCHEMA_ID = 'https://cronix.dev/schema/manifest.v1.json';

/** JSON Schema dialect of the generated file. */
export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/** The manifest JSON Schema as a plain object (draft 2020-12, TypeBox symbols removed). */
export function buildManifestJsonSchema(): Record<string, unknown> {
  const body = JSON.parse(JSON.stringify(ManifestSchema)) as Record<string, unknown>;
  return {
    $schema: JSON_SCHEMA_DIALECT,
    $id: MANIFEST_SCHEMA_ID,
    title: 'cronix manifest (v1)',
    description:
      'Periodic jobs of one application: HTTP requests, or commands (daemon and cronix trigger; local manifest files only). Besides this schema: job names are unique, each job has exactly one of request and command, schedules must parse and be able to fire, time zones are IANA names, URLs are written http://host or https://host, without credentials, reserved headers are refused (in headers and headers_from_secrets, which share one namespace ignoring case), retries.min_seconds <= max_seconds, policy.timeout_seconds of an HTTP job is at most 600 (command jobs: 86400), max_concurrent is not used with Allow, queue_max only with Enqueue, catchup.max_runs only with mode "all"; a command\'s argv[0] is not empty, its cwd is absolute, CRONIX_* variables are reserved, a variable is in env or env_from_secrets but not both, and an exit code is at most once in success_exit_codes and reject_exit_codes together. Services (daemon mode): jobs may be empty or absent when services are present, a service name is not also a job name, its argv/cwd/env follow the command rules, restart.min_seconds <= max_seconds, ready has exactly one of http_get and tcp (usable for every instance once {instance} is replaced), and its notify lists only failed and recovered.',
    ...body,
  };
}

/** The schema file's exact text: 2-space indented JSON with a trailing newline. */
export function renderManifestJsonSchema(): string {
  return `${JSON.stringify(buildManifestJsonSchema(), null, 2)}\n`;
}

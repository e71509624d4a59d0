/**
 * `cronix trigger` runs once per fire, so its start-up path must load only
 * the shim's code: not commander, not the manifest schema (TypeBox), not
 * Redis (global scope imports it lazily), not the reconciler, daemon or HTTP
 * layers. Checked on the real bundle's esbuild metafile.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

interface Meta {
  outputs: Record<
    string,
    {
      imports: { path: string; kind: string; external?: boolean }[];
      inputs: Record<string, unknown>;
    }
  >;
}

const META = fileURLToPath(new URL('../../dist/bin/meta.json', import.meta.url));

/** Inputs reachable from the chunk holding `entryInput` through static imports only. */
function staticInputs(meta: Meta, entryInput: string): Set<string> {
  const start = Object.keys(meta.outputs).find(
    (o) => entryInput in (meta.outputs[o]?.inputs ?? {}),
  );
  if (!start) throw new Error(`${entryInput} is in no output chunk`);
  const seen = new Set<string>();
  const inputs = new Set<string>();
  const queue = [start];
  while (queue.length > 0) {
    const chunk = queue.pop() as string;
    if (seen.has(chunk)) continue;
    seen.add(chunk);
    const out = meta.outputs[chunk];
    if (!out) {
      inputs.add(chunk); // an external package
      continue;
    }
    for (const input of Object.keys(out.inputs)) inputs.add(input);
    for (const imp of out.imports) if (imp.kind === 'import-statement') queue.push(imp.path);
  }
  return inputs;
}

it('the trigger path statically loads only the shim, the engine, the contract and flock', () => {
  expect(existsSync(META), 'run "npm run build" first').toBe(true);
  const meta = JSON.parse(readFileSync(META, 'utf8')) as Meta;
  const inputs = [...staticInputs(meta, 'src/shim/main.ts')];
  expect(inputs).toContain('src/shim/trigger.ts');
  expect(inputs).toContain('src/fire/engine.ts');
  // the spec is validated by the manifest contract without TypeBox: the AOT-compiled schema
  expect(inputs).toContain('src/contract/manifest/compiled-check.ts');
  expect(inputs).toContain('src/contract/manifest/semantic.ts');
  const forbidden = inputs.filter((i) =>
    /src\/(reconcile|daemon|http|cli\/program|cli\/commands)|node_modules\/(commander|@sinclair|ioredis|undici)|src\/contract\/manifest\/(schema|structural|parse|compiled-source)\.ts/.test(
      i,
    ),
  );
  expect(forbidden).toEqual([]);
  // reports (SPEC §15) cost nothing without a report URL: the reporter and its spool load lazily
  expect(
    inputs.filter((i) =>
      /src\/(shim\/(reporter|report-spool|fire-report)|contract\/report)\.ts/.test(i),
    ),
  ).toEqual([]);
});

it('the CLI entry routes trigger before loading commander', () => {
  const meta = JSON.parse(readFileSync(META, 'utf8')) as Meta;
  const inputs = [...staticInputs(meta, 'src/cli/main.ts')];
  expect(inputs.filter((i) => /commander|src\/cli\/program|src\/shim/.test(i))).toEqual([]);
  // positive control: the traversal does see packages where they are loaded
  expect(
    [...staticInputs(meta, 'src/cli/program.ts')].some((i) => i.includes('node_modules/commander')),
  ).toBe(true);
});

it('cronix serve loads the PostgreSQL client and the HA layer only when given a PostgreSQL store', () => {
  const meta = JSON.parse(readFileSync(META, 'utf8')) as Meta;
  const inputs = [...staticInputs(meta, 'src/http/serve.ts')];
  expect(inputs).toContain('src/daemon/scheduler.ts');
  expect(
    inputs.filter((i) =>
      /node_modules\/pg\/|src\/daemon\/(cluster\/|store\/pg\/|store\/postgres)/.test(i),
    ),
  ).toEqual([]);
  // positive control: the PostgreSQL store does load the client statically
  expect(
    [...staticInputs(meta, 'src/daemon/store/postgres.ts')].some((i) =>
      i.includes('node_modules/pg/'),
    ),
  ).toBe(true);
});

it('OpenTelemetry is loaded only on demand, by the shim and by serve', () => {
  const meta = JSON.parse(readFileSync(META, 'utf8')) as Meta;
  const otel = (i: string): boolean => /node_modules\/@opentelemetry|src\/fire\/otel\.ts/.test(i);
  expect([...staticInputs(meta, 'src/shim/main.ts')].filter(otel)).toEqual([]);
  // serve has @opentelemetry/api already: prom-client requires it; the SDK and exporter it has not
  const sdk = (i: string): boolean =>
    /node_modules\/@opentelemetry\/(sdk-|exporter-|otlp-|resources)|src\/fire\/otel\.ts/.test(i);
  expect([...staticInputs(meta, 'src/cli/commands/serve.ts')].filter(sdk)).toEqual([]);
  // positive control: the tracer does load the SDK statically
  expect(
    [...staticInputs(meta, 'src/fire/otel.ts')].some((i) => i.includes('@opentelemetry')),
  ).toBe(true);
});

/**
 * The alerting rules and the Grafana dashboard in contrib/: `promtool check rules` and
 * `promtool test rules` pass (Debian's `prometheus` package has promtool; scripts/test-all.sh
 * installs it), every dashboard query is valid PromQL (checked by promtool as recording rules),
 * and every metric name used in either is one a real `cronix serve` exports on /metrics.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/cli.js';
import { tempDir } from '../helpers/common.js';
import { manifestDir, spawnServe } from '../helpers/serve.js';

const PROM = join(REPO_ROOT, 'contrib/prometheus');
const RULES = join(PROM, 'cronix.rules.yml');
const DASHBOARD = join(REPO_ROOT, 'contrib/grafana/cronix-dashboard.json');

function promtool(args: string[], cwd = PROM): { status: number | null; out: string } {
  const r = spawnSync('promtool', args, { cwd, encoding: 'utf8' });
  if (r.error) throw new Error(`promtool: ${r.error.message} (apt-get install prometheus)`);
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/** The dashboard's PromQL queries, with Grafana's variables put in as a query would get them. */
function dashboardQueries(): string[] {
  const dash = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    panels: { targets: { expr: string }[] }[];
  };
  return dash.panels.flatMap((p) =>
    p.targets.map((t) => t.expr.replaceAll('$__rate_interval', '5m').replaceAll('$job', '.*')),
  );
}

/** Metric names in a text: `cronix_…` words. */
const metricNames = (text: string): Set<string> =>
  new Set(text.match(/\bcronix_[a-z0-9_]+/g) ?? []);

describe('contrib/prometheus rules', () => {
  it('pass promtool check rules', () => {
    const r = promtool(['check', 'rules', RULES]);
    expect(r.out).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });

  it('pass their unit tests (promtool test rules)', () => {
    const r = promtool(['test', 'rules', 'cronix.rules.test.yml']);
    expect(r.out).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });
});

describe('contrib/grafana dashboard', () => {
  it('has only valid PromQL (promtool parses each query as a recording rule)', () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(10);
    const file = join(tempDir('dash'), 'dashboard.rules.yml');
    writeFileSync(
      file,
      JSON.stringify({
        groups: [
          {
            name: 'dashboard',
            rules: queries.map((expr, i) => ({ record: `dashboard:query_${i}`, expr })),
          },
        ],
      }),
    );
    const r = promtool(['check', 'rules', file]);
    expect(r.out).toContain(`SUCCESS: ${queries.length} rules found`);
  });
});

describe('metric names in rules and dashboard', () => {
  it('are all exported by a real daemon', async () => {
    const dir = manifestDir('m', [
      { name: 'j', schedule: '0 0 1 1 *', request: { url: 'http://127.0.0.1:9/x' } },
    ]);
    const served = await spawnServe(dir);
    let text: string;
    try {
      text = await (await fetch(`${served.url}/metrics`)).text();
    } finally {
      served.child.kill('SIGTERM');
      await served.exited;
    }
    const exported = new Set<string>();
    for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
      const [, name, type] = m as unknown as [string, string, string];
      exported.add(name);
      if (type === 'histogram' || type === 'summary')
        for (const suffix of ['_bucket', '_sum', '_count']) exported.add(name + suffix);
    }
    const used = new Set([
      ...metricNames(readFileSync(RULES, 'utf8')),
      ...metricNames(dashboardQueries().join('\n')),
    ]);
    expect(used.size).toBeGreaterThan(12);
    expect([...used].filter((n) => !exported.has(n))).toEqual([]);
  }, 60_000);
});

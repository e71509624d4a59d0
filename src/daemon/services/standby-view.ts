/**
 * A standby's view of the services (SPEC §10, §17): only the leader runs them, so a standby
 * shows the manifests' services with the instances the ledger says are running (on the leader),
 * read from the store. Pure but for the one store read done by the caller.
 */
import { effectiveService } from '../../contract/manifest/effective.js';
import type { Manifest } from '../../contract/manifest/types.js';
import type { RunRecord } from '../store/types.js';
import type { InstanceView } from './instance.js';
import type { ServiceView } from './supervisor.js';

/** The services of `manifests`, their instances `running` where `running` has a row. */
export function standbyServices(
  manifests: readonly Manifest[],
  running: readonly RunRecord[],
): ServiceView[] {
  const rows = new Map<string, RunRecord>();
  for (const r of running)
    if (r.trigger === 'service' && r.scheduleIndex !== null)
      rows.set(`${r.app}/${r.job}/${r.scheduleIndex}`, r);
  const out: ServiceView[] = [];
  for (const m of manifests)
    for (const [name, raw] of Object.entries(m.services ?? {})) {
      const s = effectiveService(raw);
      const instanceViews: InstanceView[] = [];
      for (let index = 0; index < s.instances; index++) {
        const row = rows.get(`${m.app}/${name}/${index}`);
        instanceViews.push({
          index,
          state: row ? 'running' : 'stopped',
          pid: null,
          runId: row?.id ?? null,
          startedAt: row?.startedAt ?? null,
          restarts: 0,
          ready: null,
          lastExit: null,
          nextStartAt: null,
          crashLoop: false,
        });
      }
      out.push({
        app: m.app,
        service: name,
        argv: [...s.argv],
        instances: s.instances,
        crashLoop: false,
        ready:
          s.ready === null
            ? null
            : s.ready.http_get !== null
              ? `GET ${s.ready.http_get}`
              : `tcp ${s.ready.tcp ?? ''}`,
        instanceViews,
      });
    }
  return out.sort((a, b) => (`${a.app}/${a.service}` < `${b.app}/${b.service}` ? -1 : 1));
}

/**
 * The freeze banner (SPEC §16): on every page, while a freeze is in force, its scope, reason,
 * who froze it and since when (and until when). Read from `GET /api/v1/freezes` at start, on a
 * reconnect, on a live reset, and every few seconds (a freeze is rare and the answer small).
 */
import { useEffect, useState } from 'preact/hooks';
import { get } from './api.js';
import { inLocal } from './format.js';
import { onLive, useLive } from './live.js';

/** A freeze as the API returns it. */
export interface FreezeJson {
  app: string | null;
  job: string | null;
  reason: string;
  by: string;
  since: string;
  until: string | null;
}

const POLL_MS = 3000;

const scope = (f: FreezeJson): string =>
  f.app === null
    ? f.job === null
      ? 'Every job'
      : `Job ${f.job} of every app`
    : f.job === null
      ? `App ${f.app}`
      : `${f.app}/${f.job}`;

/** See the module comment. */
export function FreezeBanner() {
  const [freezes, setFreezes] = useState<FreezeJson[]>([]);
  const load = () =>
    void get<{ freezes: FreezeJson[] }>('/api/v1/freezes').then(
      (r) => setFreezes(r.freezes),
      () => undefined, // the pages say when the daemon does not answer
    );
  useEffect(() => {
    load();
    const t = setInterval(load, POLL_MS);
    const off = onLive(load);
    return () => (clearInterval(t), off());
  }, []);
  useLive((e) => {
    if (e.type === 'reset' || e.type === 'jobs') load();
  });
  if (freezes.length === 0) return null;
  return (
    <div class="notice notice-error freeze-banner" role="status" aria-label="Frozen">
      {freezes.map((f) => (
        <p key={`${f.app ?? ''}/${f.job ?? ''}`}>
          <strong>Frozen: {scope(f)}</strong> — {f.reason} (by {f.by}, since {inLocal(f.since)}
          {f.until ? `, until ${inLocal(f.until)}` : ''}). Nothing new starts;{' '}
          <code>
            cronix unfreeze{f.app ? ` --app ${f.app}` : ''}
            {f.job ? ` --job ${f.job}` : ''}
          </code>{' '}
          resumes.
        </p>
      ))}
    </div>
  );
}

/**
 * The job page's backfill panel (SPEC §16): the choices of `cronix backfill` — the range, only
 * missing, parallel, stop after failures — with a dry run (how many runs, the first run keys)
 * and `Start backfill` (confirmed first); below, the job's backfills with their progress, live
 * while one runs (polled every second, and on every run of the job), and `Cancel`. A session that
 * may not backfill the job (`access.ts`) sees the backfills only, and no panel when there are none.
 */
import { useEffect, useState } from 'preact/hooks';
import { may } from '../access.js';
import { get, post, seg } from '../api.js';
import { ConfirmButton, errorText, Notice, useLoad } from '../components.js';
import { inZone } from '../format.js';
import { useLive } from '../live.js';

/** A backfill as the API returns it. */
interface BackfillJson {
  id: string;
  from: string;
  to: string;
  only_missing: boolean;
  parallel: number;
  stop_after_failures: number | null;
  state: 'running' | 'done' | 'stopped' | 'cancelled';
  total: number;
  counts: { pending: number; active: number; succeeded: number; failed: number; other: number };
  created_by: string;
  created_at: string;
  ended_at: string | null;
  reason: string | null;
}

interface DryRun {
  instants: number;
  left_out: { succeeded: number; ran: number };
  runs: { run_key: string; scheduled_time: string }[];
}

type NoticeState = { kind: 'ok' | 'error'; text: preact.ComponentChildren } | null;

const hourAgo = (h: number): string =>
  new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000 - h * 3_600_000)
    .toISOString()
    .replace('.000Z', 'Z');

/** A typed instant in the one format when it parses (the question repeats it), else as typed. */
const asTyped = (text: string, zone: string): string =>
  Number.isNaN(new Date(text).getTime()) ? text : inZone(text, zone);

const STATE_TONE = {
  running: 'tone-live',
  done: 'tone-ok',
  stopped: 'tone-bad',
  cancelled: 'tone-muted',
};

function Progress({ b }: { b: BackfillJson }) {
  const done = b.counts.succeeded + b.counts.failed + b.counts.other;
  return (
    <>
      <progress max={Math.max(1, b.total)} value={done} aria-label={`backfill ${b.id} progress`} />{' '}
      <span class="backfill-progress">
        {done}/{b.total} done · {b.counts.succeeded} succeeded · {b.counts.failed} failed
        {b.counts.other > 0 && ` · ${b.counts.other} not run`}
        {b.counts.active > 0 && ` · ${b.counts.active} running`}
      </span>
    </>
  );
}

export function BackfillPanel({ app, job, zone }: { app: string; job: string; zone: string }) {
  const base = `/api/v1/jobs/${seg(app)}/${seg(job)}/backfills`;
  const [from, setFrom] = useState(hourAgo(24));
  const [to, setTo] = useState(hourAgo(0));
  const [onlyMissing, setOnlyMissing] = useState(false);
  const [parallel, setParallel] = useState('1');
  const [gate, setGate] = useState('');
  const [dry, setDry] = useState<DryRun | null>(null);
  const [notice, setNotice] = useState<NoticeState>(null);
  const list = useLoad(
    () =>
      get<{ backfills: BackfillJson[] }>(
        `/api/v1/backfills?app=${seg(app)}&job=${seg(job)}&limit=20`,
      ).then((r) => r.backfills),
    [app, job],
  );
  const running = (list.data ?? []).some((b) => b.state === 'running' || b.counts.active > 0);
  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => list.reload(), 1000);
    return () => clearInterval(t);
  }, [running]);
  useLive((e) => {
    if (running && e.type === 'run' && e.run.app === app && e.run.job === job) list.reload();
  });
  const body = (dryRun: boolean) => ({
    from: from.trim(),
    to: to.trim(),
    only_missing: onlyMissing,
    parallel: Number(parallel),
    ...(gate.trim() !== '' ? { stop_after_failures: Number(gate) } : {}),
    ...(dryRun ? { dry_run: true } : {}),
  });
  const run = async (what: string, f: () => Promise<void>) => {
    setNotice({ kind: 'ok', text: `${what}…` });
    try {
      await f();
    } catch (err) {
      setNotice({ kind: 'error', text: `${what} failed: ${errorText(err)}` });
    }
  };
  const dryRun = () =>
    run('Dry run', async () => {
      const r = await post<DryRun>(base, body(true));
      setDry(r);
      setNotice({
        kind: 'ok',
        text: `${r.runs.length} run(s) would start, of ${r.instants} instant(s) in the range (${r.left_out.succeeded} already succeeded, ${r.left_out.ran} already ran).`,
      });
    });
  const start = () =>
    run('Start backfill', async () => {
      const r = await post<{ backfill: BackfillJson }>(base, body(false));
      setDry(null);
      setNotice({ kind: 'ok', text: `Backfill of ${r.backfill.total} run(s) started.` });
      list.reload();
    });
  const cancel = (id: string) =>
    run('Cancel backfill', async () => {
      await post(`/api/v1/backfills/${seg(id)}/cancel`);
      setNotice({ kind: 'ok', text: 'Backfill cancelled; its runs in flight finish.' });
      list.reload();
    });
  const mayStart = may('POST /api/v1/jobs/{app}/{job}/backfills', app);
  const mayCancel = may('POST /api/v1/backfills/{id}/cancel', app);
  if (!mayStart && (list.data ?? []).length === 0) return null;
  return (
    <section aria-labelledby="backfill-h">
      <h2 id="backfill-h">Backfill</h2>
      {mayStart && (
        <form
          class="backfill-form"
          onSubmit={(e) => {
            e.preventDefault();
            void dryRun();
          }}
        >
          <label>
            From (RFC 3339){' '}
            <input
              value={from}
              required
              onInput={(e) => setFrom((e.target as HTMLInputElement).value)}
            />
          </label>
          <label>
            To, excluded{' '}
            <input
              value={to}
              required
              onInput={(e) => setTo((e.target as HTMLInputElement).value)}
            />
          </label>
          <label>
            <input
              type="checkbox"
              checked={onlyMissing}
              onChange={(e) => setOnlyMissing((e.target as HTMLInputElement).checked)}
            />{' '}
            Only missing
          </label>
          <label>
            Parallel{' '}
            <input
              type="number"
              min="1"
              max="1024"
              required
              value={parallel}
              onInput={(e) => setParallel((e.target as HTMLInputElement).value)}
            />
          </label>
          <label>
            Stop after failures{' '}
            <input
              type="number"
              min="1"
              placeholder="never"
              value={gate}
              onInput={(e) => setGate((e.target as HTMLInputElement).value)}
            />
          </label>
          <button type="submit">Dry run</button>
          <ConfirmButton
            label="Start backfill"
            question={`Run ${app}/${job}'s instants from ${asTyped(from, zone)} to ${asTyped(to, zone)}${dry ? ` (${dry.runs.length} runs)` : ''} now, ${parallel} at a time? Keys that already succeeded are left out.`}
            confirmLabel="Start the backfill"
            onConfirm={() => void start()}
          />
        </form>
      )}
      <Notice notice={notice} />
      {dry && dry.runs.length > 0 && (
        <details>
          <summary>Run keys of the dry run ({dry.runs.length})</summary>
          <ul class="plain backfill-keys">
            {dry.runs.slice(0, 50).map((r) => (
              <li key={r.run_key}>
                <code>{r.run_key}</code>
              </li>
            ))}
            {dry.runs.length > 50 && <li>… and {dry.runs.length - 50} more</li>}
          </ul>
        </details>
      )}
      {(list.data ?? []).length > 0 && (
        <table class="backfills">
          <caption>
            Backfills of {app}/{job}, newest first
          </caption>
          <thead>
            <tr>
              <th scope="col">Range</th>
              <th scope="col">State</th>
              <th scope="col">Progress</th>
              <th scope="col">By</th>
              {mayCancel && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {(list.data ?? []).map((b) => (
              <tr key={b.id} data-backfill={b.id}>
                <td data-label="Range">
                  {inZone(b.from, zone)} – {inZone(b.to, zone)}
                  {b.only_missing && ' (only missing)'}, {b.parallel} at a time
                </td>
                <td data-label="State">
                  <span class={`badge ${STATE_TONE[b.state]}`}>{b.state}</span>
                  {b.reason && <div class="muted">{b.reason}</div>}
                </td>
                <td data-label="Progress">
                  <Progress b={b} />
                </td>
                <td data-label="By">{b.created_by}</td>
                {mayCancel && (
                  <td data-label="Actions">
                    {b.state === 'running' && (
                      <ConfirmButton
                        label="Cancel"
                        question="Cancel this backfill? Nothing more is started; its runs in flight finish."
                        confirmLabel="Cancel the backfill"
                        onConfirm={() => void cancel(b.id)}
                      />
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

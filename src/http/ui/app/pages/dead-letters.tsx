/**
 * Dead letters (SPEC §16): runs that ended failed and whose run key has not succeeded since,
 * with the count per job; a job filter; `Replay` of the job's (or all) shown dead letters (dry
 * run first, confirmed, at most 100 at once); `Dismiss` of one with a note. The verbs are shown
 * to a session that may use them on the apps concerned (`access.ts`).
 */
import { useState } from 'preact/hooks';
import { may } from '../access.js';
import { get, post, seg, type RunJson } from '../api.js';
import {
  ConfirmButton,
  errorText,
  Notice,
  OutcomeBadge,
  ReadOnly,
  useLoad,
  When,
} from '../components.js';
import { useLive } from '../live.js';
import { jobPath, Link } from '../router.js';

interface View {
  dead_letters: RunJson[];
  counts: { app: string; job: string; count: number }[];
}

type NoticeState = { kind: 'ok' | 'error'; text: preact.ComponentChildren } | null;

/** The page. */
export function DeadLettersPage() {
  const [job, setJob] = useState('');
  const [notice, setNotice] = useState<NoticeState>(null);
  const [note, setNote] = useState('');
  const filter = job ? `app=${seg(job.split('/')[0]!)}&job=${seg(job.split('/')[1]!)}` : '';
  const view = useLoad(() => get<View>(`/api/v1/dead-letters?limit=200&${filter}`), [filter]);
  useLive((e) => {
    if (e.type === 'reset' || (e.type === 'run' && e.run.phase === 'ended')) view.reload();
  });
  const act = async (what: string, f: () => Promise<void>) => {
    setNotice({ kind: 'ok', text: `${what}…` });
    try {
      await f();
      view.reload();
    } catch (err) {
      setNotice({ kind: 'error', text: `${what} failed: ${errorText(err)}` });
    }
  };
  const body = () =>
    job ? { app: job.split('/')[0], job: job.split('/')[1], max: 100 } : { max: 100 };
  const replay = () =>
    act('Replay', async () => {
      const r = await post<{ replayed: { admission?: string; error?: string }[] }>(
        '/api/v1/dead-letters/replay',
        body(),
      );
      const failed = r.replayed.filter((x) => x.error).length;
      setNotice({
        kind: failed ? 'error' : 'ok',
        text: `Replayed ${r.replayed.length - failed} dead letter(s)${failed ? `; ${failed} could not be replayed` : ''}.`,
      });
    });
  const dismiss = (id: string) =>
    act('Dismiss', async () => {
      const r = await post<{ dismissed: string[] }>('/api/v1/dead-letters/dismiss', {
        run_ids: [id],
        note: note.trim() || 'dismissed in the web UI',
      });
      setNotice({ kind: 'ok', text: `Dismissed ${r.dismissed.length} dead letter(s).` });
    });
  const d = view.data;
  const shown = d?.dead_letters ?? [];
  const mayDismiss = (app: string) => may('POST /api/v1/dead-letters/dismiss', app);
  // a bulk replay without a job touches every app: offered to a session of every app only
  const mayReplay = job
    ? may('POST /api/v1/dead-letters/replay', job.split('/')[0])
    : may('POST /api/v1/dead-letters/replay');
  const anyDismiss = shown.some((r) => mayDismiss(r.app));
  return (
    <main>
      <h1>Dead letters</h1>
      <p class="muted">
        Runs that ended failed (app rejected, retries exhausted, crashed, internal error) and whose
        run key has not succeeded since. A replay that succeeds leaves this list.
      </p>
      {view.error !== null && (
        <p class="notice notice-error" role="alert">
          {errorText(view.error)}
        </p>
      )}
      <table class="dead-letter-counts">
        <caption>Dead letters per job</caption>
        <thead>
          <tr>
            <th scope="col">Job</th>
            <th scope="col">Dead letters</th>
          </tr>
        </thead>
        <tbody>
          {(d?.counts ?? []).map((c) => (
            <tr key={`${c.app}/${c.job}`}>
              <td data-label="Job">
                <Link href={jobPath(c.app, c.job)}>
                  {c.app}/{c.job}
                </Link>
              </td>
              <td data-label="Dead letters">{c.count}</td>
            </tr>
          ))}
          {d && d.counts.length === 0 && (
            <tr>
              <td colSpan={2}>No dead letters.</td>
            </tr>
          )}
        </tbody>
      </table>
      <div class="toolbar">
        <label>
          Job{' '}
          <select value={job} onChange={(e) => setJob((e.target as HTMLSelectElement).value)}>
            <option value="">all jobs</option>
            {(d?.counts ?? []).map((c) => (
              <option key={`${c.app}/${c.job}`} value={`${c.app}/${c.job}`}>
                {c.app}/{c.job}
              </option>
            ))}
          </select>
        </label>
        {mayReplay && (
          <ConfirmButton
            label="Replay"
            disabled={shown.length === 0}
            question={`Replay ${Math.min(100, shown.length)} dead letter(s)${job ? ` of ${job}` : ''}, oldest first? Each keeps its run key and goes through its job's overlap policy.`}
            confirmLabel="Replay them"
            onConfirm={() => void replay()}
          />
        )}
        {anyDismiss && (
          <label>
            Note for a dismissal{' '}
            <input value={note} onInput={(e) => setNote((e.target as HTMLInputElement).value)} />
          </label>
        )}
      </div>
      {!mayReplay && <ReadOnly app={job ? job.split('/')[0] : undefined} />}
      <Notice notice={notice} />
      <table class="runs stack">
        <caption>Dead letters{job ? ` of ${job}` : ''}, newest first</caption>
        <thead>
          <tr>
            <th scope="col">Job</th>
            <th scope="col">Scheduled</th>
            <th scope="col">Trigger</th>
            <th scope="col">Outcome</th>
            <th scope="col">Error</th>
            {anyDismiss && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>
          {shown.map((r) => (
            <tr key={r.id} data-run={r.id}>
              <td data-label="Job">
                <Link href={`/runs/${r.id}`}>
                  {r.app}/{r.job}
                </Link>
              </td>
              <td data-label="Scheduled">
                <When iso={r.scheduled_time} zone="UTC" />
              </td>
              <td data-label="Trigger">{r.trigger}</td>
              <td data-label="Outcome">
                <OutcomeBadge run={r} />
              </td>
              <td data-label="Error">{r.error}</td>
              {anyDismiss && (
                <td data-label="Actions">
                  {mayDismiss(r.app) && (
                    <button type="button" onClick={() => void dismiss(r.id)}>
                      Dismiss
                    </button>
                  )}
                </td>
              )}
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}

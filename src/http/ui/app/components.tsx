/** Small shared pieces: outcome badges and strips, times, run tables, actions. */
import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { readOnlyReason } from './access.js';
import { ApiError, type Outcome, type RunJson } from './api.js';
import {
  bothClocks,
  duration,
  OUTCOME_TEXT,
  outcomeTone,
  runDuration,
  runState,
} from './format.js';
import { jobPath, Link } from './router.js';
import { isLive, onLive } from './live.js';

/** An outcome (or a phase) as text with a colour; the text carries the meaning. */
export function OutcomeBadge({ run, outcome }: { run?: RunJson; outcome?: Outcome | null }) {
  const o = run ? run.outcome : (outcome ?? null);
  const text = run ? runState(run) : o ? OUTCOME_TEXT[o] : 'never ran';
  return <span class={`badge tone-${outcomeTone(o)}`}>{text}</span>;
}

/** The last outcomes, oldest left, newest right; each cell titled, with a text summary. */
export function OutcomeStrip({ outcomes }: { outcomes: Outcome[] }) {
  const counts = new Map<Outcome, number>();
  for (const o of outcomes) counts.set(o, (counts.get(o) ?? 0) + 1);
  const summary =
    outcomes.length === 0
      ? 'no runs yet'
      : `last ${outcomes.length}: ` +
        [...counts].map(([o, n]) => `${n} ${OUTCOME_TEXT[o]}`).join(', ');
  return (
    <span class="strip" title={summary}>
      {[...outcomes].reverse().map((o, i) => (
        <span key={i} class={`cell tone-${outcomeTone(o)} o-${o}`} />
      ))}
      <span class="sr-only">{summary}</span>
    </span>
  );
}

/**
 * An instant in the job's zone, with the viewer's local time beside it when it differs. With
 * `run`, the instant links to that run (named so for screen readers: "Run scheduled …").
 */
export function When({ iso, zone, run }: { iso: string | null; zone: string; run?: string }) {
  const t = bothClocks(iso, zone);
  if (!t) return <span class="muted">—</span>;
  const time = <time dateTime={iso ?? undefined}>{t.job}</time>;
  return (
    <span class="when">
      {run === undefined ? (
        time
      ) : (
        <Link href={`/runs/${encodeURIComponent(run)}`}>
          <span class="sr-only">Run scheduled </span>
          {time}
        </Link>
      )}
      {t.local && <span class="local">{t.local} your time</span>}
    </span>
  );
}

/**
 * A table of runs with the column headers of SPEC §13. The job's name opens the job; the
 * scheduled time opens the run. On a phone each run is a block of labelled lines.
 */
export function RunTable({
  runs,
  zoneOf,
  caption,
  empty = 'No runs.',
}: {
  runs: RunJson[];
  zoneOf: (r: RunJson) => string;
  caption: string;
  empty?: string;
}) {
  return (
    <table class="runs stack">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Job</th>
          <th scope="col">Scheduled</th>
          <th scope="col">Trigger</th>
          <th scope="col">Outcome</th>
          <th scope="col">Attempts</th>
          <th scope="col">Duration</th>
        </tr>
      </thead>
      <tbody>
        {runs.length === 0 && (
          <tr>
            <td colSpan={6} class="muted">
              {empty}
            </td>
          </tr>
        )}
        {runs.map((r) => (
          <tr key={r.id} data-run={r.id}>
            <td data-label="Job">
              <Link href={jobPath(r.app, r.job)}>{`${r.app}/${r.job}`}</Link>
            </td>
            <td data-label="Scheduled">
              <When iso={r.scheduled_time} zone={zoneOf(r)} run={r.id} />
            </td>
            <td data-label="Trigger">{triggerText(r)}</td>
            <td data-label="Outcome">
              <OutcomeBadge run={r} />
              {r.error && <span class="err-line">{r.error}</span>}
            </td>
            <td data-label="Attempts" class="num">
              {r.attempts}
            </td>
            <td data-label="Duration" class="num">
              {duration(runDuration(r))}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A message for the result of an action or a load, announced to screen readers. */
export function Notice({
  notice,
}: {
  notice: { kind: 'ok' | 'error'; text: ComponentChildren } | null;
}) {
  if (!notice) return <p class="notice-slot" role="status" aria-live="polite" />;
  return (
    <p
      class={`notice notice-${notice.kind}`}
      role={notice.kind === 'error' ? 'alert' : 'status'}
      aria-live="polite"
    >
      {notice.text}
    </p>
  );
}

/** Words for an error of the API. */
export function errorText(err: unknown): string {
  if (err instanceof ApiError) return `${err.message} (${err.code})`;
  return (err as Error).message;
}

/**
 * A muted line saying why the actions on `app` (or the page's) are not shown (`access.ts`);
 * nothing when the session may use them.
 */
export function ReadOnly({ app }: { app?: string }) {
  const why = readOnlyReason(app);
  return why === null ? null : <p class="muted read-only">{why}</p>;
}

/** A button that asks for confirmation in a modal dialog before `onConfirm`. */
export function ConfirmButton({
  label,
  question,
  confirmLabel,
  onConfirm,
  disabled,
}: {
  label: string;
  question: string;
  confirmLabel: string;
  onConfirm: () => void;
  disabled?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  return (
    <>
      <button
        type="button"
        class="danger"
        disabled={disabled}
        onClick={() => ref.current?.showModal()}
      >
        {label}
      </button>
      <dialog ref={ref} aria-label={label}>
        <form
          method="dialog"
          onSubmit={(e) => {
            const v = (e.submitter as HTMLButtonElement | null)?.value;
            if (v === 'yes') onConfirm();
          }}
        >
          <p>{question}</p>
          <div class="actions">
            <button value="no" type="submit" autoFocus>
              Keep it
            </button>
            <button value="yes" type="submit" class="danger">
              {confirmLabel}
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}

/** Data loaded from the API, reloaded when `deps` change or `reload()` is called. */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: unknown[],
): { data: T | null; error: unknown; reload: () => void; set: (f: (d: T) => T) => void } {
  const [state, setState] = useState<{ data: T | null; error: unknown }>({
    data: null,
    error: null,
  });
  const [tick, setTick] = useState(0);
  // loaded while the event stream was not connected (a page opened before the stream's first
  // `ready`): a change in between came through no stream, so load again once it is connected
  const unsure = useRef(false);
  useEffect(
    () =>
      onLive(() => {
        if (!unsure.current) return;
        unsure.current = false;
        setTick((t) => t + 1);
      }),
    [],
  );
  useEffect(() => {
    let live = true;
    unsure.current = !isLive();
    load().then(
      (data) => live && setState({ data, error: null }),
      (error: unknown) => live && setState((s) => ({ data: s.data, error })),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  return {
    ...state,
    reload: () => setTick((t) => t + 1),
    set: (f) => setState((s) => (s.data === null ? s : { data: f(s.data), error: s.error })),
  };
}

/** `f`, called at most once per `ms` (the first call at once, the last one never lost). */
export function useThrottled(f: () => void, ms: number): () => void {
  const ref = useRef({ f, last: 0, timer: 0 as ReturnType<typeof setTimeout> | 0 });
  ref.current.f = f;
  useEffect(() => () => clearTimeout(ref.current.timer || undefined), []);
  return () => {
    const r = ref.current;
    if (r.timer) return;
    const wait = Math.max(0, r.last + ms - Date.now());
    r.timer = setTimeout(() => {
      r.timer = 0;
      r.last = Date.now();
      r.f();
    }, wait);
  };
}

/** A run's trigger in words: a host run names its host (SPEC §15). */
export function triggerText(r: RunJson): string {
  return r.trigger === 'host' ? (r.host ? `host ${r.host}` : 'host (none)') : r.trigger;
}

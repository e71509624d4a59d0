/**
 * Charts: outcomes per hour (SVG, stacked), a job's timeline of runs (SVG:
 * scheduled vs started vs ended, with skipped, queue_full, stopped and missed
 * drawn distinctly) and its durations (uPlot). Each has a text equivalent.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Outcome, RunJson } from './api.js';
import { duration, inZone, OUTCOME_TEXT, outcomeTone } from './format.js';
import { navigate } from './router.js';

const ORDER: Outcome[] = [
  'success',
  'app_rejected',
  'retries_exhausted',
  'crashed',
  'internal_error',
  'skipped',
  'queue_full',
  'stopped',
  'missed',
  'duplicate',
];

/** Stacked bars of outcomes per hour (hours in the viewer's zone), with the totals written out below. */
export function OutcomeBars({
  hours,
  totals,
}: {
  hours: { start: string; counts: Partial<Record<Outcome, number>> }[];
  totals: Partial<Record<Outcome, number>>;
}) {
  const sum = (c: Partial<Record<Outcome, number>>) =>
    Object.values(c).reduce((a, b) => a + (b ?? 0), 0);
  const max = Math.max(1, ...hours.map((h) => sum(h.counts)));
  const total = sum(totals);
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  return (
    <figure class="chart">
      <div class="bars" role="img" aria-label={`Runs per hour over the last ${hours.length} hours`}>
        {hours.map((h) => (
          <div
            key={h.start}
            class="col"
            title={
              `${inZone(h.start, zone)}: ` +
              (ORDER.filter((o) => h.counts[o])
                .map((o) => `${h.counts[o]} ${OUTCOME_TEXT[o]}`)
                .join(', ') || 'no runs')
            }
          >
            {ORDER.filter((o) => h.counts[o]).map((o) => (
              <div
                key={o}
                class={`seg fill-${outcomeTone(o)} o-${o}`}
                style={{ height: `${((h.counts[o] ?? 0) / max) * 100}%` }}
              />
            ))}
          </div>
        ))}
      </div>
      <div class="bar-axis" aria-hidden="true">
        {hours.map((h, i) => (
          <span key={h.start}>
            {i % 3 === 0 ? `${String(new Date(h.start).getHours()).padStart(2, '0')}:00` : ''}
          </span>
        ))}
      </div>
      <figcaption>
        {total === 0 ? (
          'No runs ended in this window.'
        ) : (
          <ul class="legend">
            {ORDER.filter((o) => totals[o]).map((o) => (
              <li key={o}>
                <span class={`swatch fill-${outcomeTone(o)} o-${o}`} aria-hidden="true" />
                {OUTCOME_TEXT[o]}: <strong>{totals[o]}</strong>
              </li>
            ))}
          </ul>
        )}
      </figcaption>
    </figure>
  );
}

/** Shape of a run that never started, by outcome. */
function marker(o: Outcome | null, x: number, y: number) {
  switch (o) {
    case 'missed':
      return <circle cx={x} cy={y} r={5} class="mark-missed" />;
    case 'skipped':
      return (
        <path
          d={`M${x - 4} ${y - 4}L${x + 4} ${y + 4}M${x + 4} ${y - 4}L${x - 4} ${y + 4}`}
          class="mark-skipped"
        />
      );
    case 'queue_full':
      return (
        <path d={`M${x} ${y - 5}L${x + 5} ${y + 4}L${x - 5} ${y + 4}Z`} class="mark-queue_full" />
      );
    case 'stopped':
      return <rect x={x - 4} y={y - 4} width={8} height={8} class="mark-stopped" />;
    default:
      return <circle cx={x} cy={y} r={3} class={`fill-${outcomeTone(o)}`} />;
  }
}

/**
 * One row per run, newest at the top: a tick at the scheduled time, a bar from
 * start to end coloured by outcome; runs that never started get a shape of
 * their own. Clicking a row opens the run.
 */
export function Timeline({ runs, zone }: { runs: RunJson[]; zone: string }) {
  const shown = runs.slice(0, 30);
  if (shown.length === 0) return <p class="muted">No runs to draw yet.</p>;
  const t = (s: string | null) => (s ? new Date(s).getTime() : NaN);
  const times = shown
    .flatMap((r) => [t(r.scheduled_time), t(r.started_at), t(r.ended_at)])
    .filter((x) => !Number.isNaN(x));
  const now = Date.now();
  const first = Math.min(...times);
  const latest = Math.max(...times, ...shown.filter((r) => r.phase !== 'ended').map(() => now));
  // a little room on both sides, and at least a minute across
  const pad = Math.max(30_000, (latest - first) * 0.03);
  const lo = first - pad;
  const hi = latest + pad;
  const W = 720;
  const L = 10;
  const R = 10;
  const ROW = 14;
  const x = (ms: number) => L + ((ms - lo) / Math.max(1, hi - lo)) * (W - L - R);
  const H = shown.length * ROW + 20;
  return (
    <figure class="chart">
      <svg
        viewBox={`0 0 ${W} ${H}`}
        role="img"
        aria-label="Timeline of the newest runs: scheduled, started and ended"
      >
        {shown.map((r, i) => {
          const y = 8 + i * ROW;
          const s = t(r.scheduled_time);
          const st = t(r.started_at);
          const en = r.phase === 'ended' ? t(r.ended_at) : now;
          return (
            <g key={r.id} class="tl-row" onClick={() => navigate(`/runs/${r.id}`)}>
              <title>{`${inZone(r.scheduled_time, zone)} · ${r.trigger} · ${r.outcome ? OUTCOME_TEXT[r.outcome] : r.phase}${r.duration_ms !== null ? ` · ${duration(r.duration_ms)}` : ''}`}</title>
              <line x1={x(s)} x2={x(s)} y1={y - 5} y2={y + 5} class="tick" />
              {Number.isNaN(st) ? (
                marker(r.outcome, x(s), y)
              ) : (
                <>
                  <line x1={x(s)} x2={x(st)} y1={y} y2={y} class="wait" />
                  <rect
                    x={x(st)}
                    y={y - 4}
                    width={Math.max(2, x(en) - x(st))}
                    height={8}
                    class={`fill-${outcomeTone(r.outcome)}`}
                  />
                </>
              )}
            </g>
          );
        })}
        <text x={L} y={H - 4} class="axis">
          {inZone(lo, zone)}
        </text>
        <text x={W - R} y={H - 4} class="axis" text-anchor="end">
          {inZone(hi, zone)}
        </text>
      </svg>
      <figcaption class="legend-line">
        Tick: scheduled · thin line: waiting · bar: started → ended (colour: outcome) · ○ missed · ×
        skipped · △ queue full · □ stopped before it started
      </figcaption>
    </figure>
  );
}

/** Durations of ended runs over time (uPlot), newest right. */
export function DurationChart({ runs }: { runs: RunJson[] }) {
  const el = useRef<HTMLDivElement>(null);
  const points = runs
    .filter((r) => r.duration_ms !== null && r.started_at)
    .map((r) => [new Date(r.started_at!).getTime() / 1000, r.duration_ms! / 1000] as const)
    .sort((a, b) => a[0] - b[0]);
  useEffect(() => {
    if (!el.current || points.length < 2) return;
    const plot = new uPlot(
      {
        width: Math.min(720, el.current.clientWidth || 720),
        height: 180,
        series: [
          {},
          { label: 'Duration (s)', stroke: '#1f4e79', width: 2, points: { show: true, size: 5 } },
        ],
        axes: [{}, { label: 'seconds', size: 50 }],
        legend: { show: true },
      },
      [points.map((p) => p[0]), points.map((p) => p[1])],
      el.current,
    );
    return () => plot.destroy();
  }, [JSON.stringify(points)]);
  if (points.length < 2)
    return (
      <p class="muted">
        {points.length === 0
          ? 'No finished runs with a duration yet.'
          : `One finished run so far: ${duration(points[0]![1] * 1000)}. The chart starts at two.`}
      </p>
    );
  const ds = points.map((p) => p[1] * 1000);
  return (
    <figure class="chart">
      <div ref={el} role="img" aria-label="Duration of each run over time" />
      <figcaption>
        {points.length} runs: fastest {duration(Math.min(...ds))}, slowest{' '}
        {duration(Math.max(...ds))}, median{' '}
        {duration([...ds].sort((a, b) => a - b)[Math.floor(ds.length / 2)] ?? null)}
      </figcaption>
    </figure>
  );
}

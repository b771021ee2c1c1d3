// The 30-day click chart. uPlot is imported on demand: it is the largest library the client uses
// and only this screen needs it, so the first screen's script stays small.
import { html } from 'htm/preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ErrorMessage } from '../components';
import { formatDay, plural } from '../format';

const HALF_DAY_S = 43_200;

export interface DayCount {
  date: string;
  count: number;
}

export function ClicksChart({ daily }: { daily: DayCount[] }) {
  const box = useRef<HTMLDivElement>(null);
  const [error, setError] = useState<unknown>(null);
  const total = daily.reduce((n, d) => n + d.count, 0);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let chart: { destroy(): void; setSize(s: { width: number; height: number }): void } | null = null;
    let resize: ResizeObserver | null = null;
    let cancelled = false;
    import('uplot').then(
      ({ default: uPlot }) => {
        if (cancelled) return;
        const days = daily.map((d) => Date.parse(d.date + 'T00:00:00Z') / 1000);
        const counts = daily.map((d) => d.count);
        const accent = getComputedStyle(el).getPropertyValue('--accent').trim() || '#1d5fa8';
        const ink = getComputedStyle(el).getPropertyValue('--ink').trim() || '#222';
        const width = () => Math.max(240, el.clientWidth);
        const u = new uPlot(
          {
            width: width(),
            height: 200,
            legend: { show: false },
            cursor: { show: false },
            // Days are UTC calendar days (docs/links.md): label them so, not in local time.
            tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
            // Half a day either side: a bar is centred on its day, so the first and the last (today)
            // would otherwise be cut in half at the plot's edges.
            scales: { x: { time: true, range: (_u: unknown, min: number, max: number) => [min - HALF_DAY_S, max + HALF_DAY_S] }, y: { range: (_u: unknown, _min: number, max: number) => [0, Math.max(1, max)] } },
            axes: [
              { stroke: ink, grid: { show: false } },
              { stroke: ink, incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 5000, 10000, 50000, 100000] },
            ],
            series: [{}, { label: 'Clicks', stroke: accent, fill: accent, width: 0, paths: uPlot.paths.bars!({ size: [0.7, 40] }), points: { show: false } }],
          },
          [days, counts],
          el,
        );
        chart = u;
        resize = new ResizeObserver(() => u.setSize({ width: width(), height: 200 }));
        resize.observe(el);
      },
      (err) => setError(err),
    );
    return () => {
      cancelled = true;
      resize?.disconnect();
      chart?.destroy();
    };
  }, [daily]);

  const first = daily[0]?.date;
  const last = daily[daily.length - 1]?.date;
  return html`<figure class="chart-figure">
    <div class="chart" ref=${box} role="img" data-total=${total}
      aria-label=${`Bar chart of clicks per day from ${first ? formatDay(first) : ''} to ${last ? formatDay(last) : ''}: ${plural(total, 'click')} in all. The table below lists every day.`}></div>
    <figcaption class="muted small">Clicks per day (UTC), last 30 days, people only.</figcaption>
    <${ErrorMessage} error=${error} />
    <details>
      <summary>Clicks per day as a table</summary>
      <table class="daily">
        <thead><tr><th scope="col">Day (UTC)</th><th scope="col">Clicks</th></tr></thead>
        <tbody>
          ${daily.map((d) => html`<tr><th scope="row">${formatDay(d.date)}</th><td data-date=${d.date}>${d.count}</td></tr>`)}
        </tbody>
      </table>
    </details>
  </figure>`;
}

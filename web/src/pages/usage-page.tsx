import { ErrorBanner } from "../components/error-banner.js";
import { LinePlot } from "../components/line-plot.js";
import { UsageFold } from "../fold/usage.js";
import { clock, count, usd } from "../format.js";
import { useContinuityLog, useFold } from "../log/use-log.js";

/**
 * Tokens and spend over time: input and output tokens per model step and the running spend (from
 * each run's `cost_usd`) as plots, with totals and a table by model.
 */
export function UsagePage({ continuity }: { continuity: string }) {
  const log = useContinuityLog(continuity);
  const fold = useFold(continuity, log.events, () => new UsageFold());
  let spent = 0;
  const spend = fold.runs.map((run) => {
    spent += run.costUsd;
    return { x: run.at, y: spent };
  });
  return (
    <section aria-label="Usage">
      {log.error ? <ErrorBanner error={log.error} title="Log" /> : null}
      <dl className="facts totals" aria-label="Totals">
        <dt>input tokens</dt>
        <dd>{count(fold.totals.input)}</dd>
        <dt>output tokens</dt>
        <dd>{count(fold.totals.output)}</dd>
        <dt>cache read</dt>
        <dd>{count(fold.totals.cacheRead)}</dd>
        <dt>spend</dt>
        <dd>{usd(fold.totals.costUsd)}</dd>
        <dt>model steps</dt>
        <dd>{count(fold.steps.length)}</dd>
      </dl>
      <h2>Tokens per step</h2>
      <LinePlot
        label="Tokens per model step over time"
        formatX={clock}
        series={[
          {
            name: "input",
            color: "var(--accent)",
            points: fold.steps.map((step) => ({ x: step.at, y: step.input })),
          },
          {
            name: "output",
            color: "var(--good)",
            points: fold.steps.map((step) => ({ x: step.at, y: step.output })),
          },
        ]}
      />
      <h2>Spend</h2>
      <LinePlot
        label="Spend over time (US dollars, running total)"
        formatX={clock}
        formatY={usd}
        series={[
          { name: "spend (running total)", color: "var(--warn)", points: spend, step: true },
        ]}
      />
      <h2>By model</h2>
      <table className="grid" aria-label="Usage by model">
        <thead>
          <tr>
            <th>model</th>
            <th>steps</th>
            <th>input</th>
            <th>output</th>
          </tr>
        </thead>
        <tbody>
          {[...fold.byModel].map(([model, usage]) => (
            <tr key={model}>
              <td className="mono">{model}</td>
              <td>{count(usage.steps)}</td>
              <td>{count(usage.input)}</td>
              <td>{count(usage.output)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

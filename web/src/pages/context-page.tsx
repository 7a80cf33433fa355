import { useEffect, useState } from "react";
import { type ApiError, type ContextReport, readContext } from "../api.js";
import { ErrorBanner } from "../components/error-banner.js";
import { Link } from "../components/link.js";
import { ThreadsFold } from "../fold/threads.js";
import { clock, count } from "../format.js";
import { useContinuityLog, useFold } from "../log/use-log.js";
import { pathOf } from "../router.js";

/**
 * The context of one model step: what it was compiled from (system, pins, summaries, feeds,
 * messages) with each part's tokens against the budget, the summaries and pins it held, and the
 * log ranges it covers. Without a step in the address, the newest step; a list of steps to pick.
 */
export function ContextPage({ continuity, step }: { continuity: string; step?: string }) {
  const log = useContinuityLog(continuity);
  const threads = useFold(continuity, log.events, () => new ThreadsFold());
  const steps = [...threads.threads.values()]
    .filter((thread) => !thread.worker)
    .flatMap((thread) => thread.steps);
  const chosen = step ?? steps.at(-1);
  const [report, setReport] = useState<ContextReport | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  useEffect(() => {
    if (!chosen) return;
    let live = true;
    setReport(undefined);
    setError(undefined);
    readContext(continuity, chosen).then(
      (found) => live && setReport(found),
      (failure: ApiError) => live && setError(failure),
    );
    return () => {
      live = false;
    };
  }, [continuity, chosen]);
  return (
    <section aria-label="Context" className="split">
      <nav className="step-list" aria-label="Steps">
        {steps.length === 0 ? <p className="empty">No model step yet.</p> : null}
        <ul>
          {steps.map((id) => (
            <li key={id}>
              <Link to={pathOf(continuity, "context", id)} className="mono" current={id === chosen}>
                {id}
              </Link>
            </li>
          ))}
        </ul>
      </nav>
      <div>
        {error ? <ErrorBanner error={error} title="Context" /> : null}
        {report ? (
          <ContextView report={report} />
        ) : chosen && !error ? (
          <p className="empty">Loading…</p>
        ) : null}
      </div>
    </section>
  );
}

function ContextView({ report }: { report: ContextReport }) {
  const { compiled } = report;
  const parts = Object.entries(compiled.parts ?? {});
  return (
    <article>
      <h2 className="mono">{report.step}</h2>
      <p className="quiet">
        {report.model ?? "model unknown"} · compiled at {clock(report.ts)} (seq {report.seq}) ·
        strategy {compiled.strategy}
      </p>
      <dl className="facts">
        <dt>tokens</dt>
        <dd>
          {count(compiled.tokens)} of {count(compiled.budget)} (
          {Math.round((compiled.tokens / Math.max(1, compiled.budget)) * 100)}%)
          {compiled.over_budget ? <span className="badge failed"> over budget</span> : null}
        </dd>
        <dt>messages</dt>
        <dd>
          {count(compiled.messages)} kept, {count(compiled.omitted)} omitted
        </dd>
        <dt>digest</dt>
        <dd className="mono">{compiled.digest}</dd>
      </dl>
      <h3>Parts</h3>
      <table className="grid" aria-label="Context parts">
        <tbody>
          {parts.map(([name, tokens]) => (
            <tr key={name}>
              <th>{name}</th>
              <td>{count(tokens)} tokens</td>
              <td className="bar-cell">
                <span
                  className="bar"
                  style={{
                    width: `${Math.min(100, (tokens / Math.max(1, compiled.tokens)) * 100)}%`,
                  }}
                />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {compiled.ranges?.length ? (
        <>
          <h3>Log ranges</h3>
          <ul className="mono">
            {compiled.ranges.map((range) => (
              <li key={`${range.thread}${range.from_seq}`}>
                {range.thread}: seq {range.from_seq}–{range.to_seq}
              </li>
            ))}
          </ul>
        </>
      ) : null}
      <h3>Summaries</h3>
      {report.summaries.length === 0 ? <p className="empty">None.</p> : null}
      <ul>
        {report.summaries.map((summary) => (
          <li key={summary.id}>
            <span className="mono">{summary.id}</span> by {summary.summarizer ?? "?"} ·{" "}
            {summary.tokens === null ? "?" : count(summary.tokens)} tokens
            {summary.covers
              ? ` · covers ${summary.covers.thread} seq ${summary.covers.from_seq}–${summary.covers.to_seq}`
              : ""}
          </li>
        ))}
      </ul>
      <h3>Pinned</h3>
      {report.pinned.length === 0 ? <p className="empty">None.</p> : null}
      <ul>
        {report.pinned.map((pin) => (
          <li key={pin.id}>
            <span className="badge">{pin.kind ?? "?"}</span>{" "}
            {pin.text ?? <span className="mono">{pin.id}</span>}
          </li>
        ))}
      </ul>
    </article>
  );
}

import { useState } from "react";
import { type ApiError, changeSource } from "../api.js";
import { ErrorBanner } from "../components/error-banner.js";
import { type SourceInfo, SourcesFold } from "../fold/sources.js";
import { clock, count } from "../format.js";
import { useContinuityLog, useFold } from "../log/use-log.js";

/**
 * The continuity's sources: kind, target, status, cursor, what each has read, and its lag (chunks
 * read that the conversation has not been given yet, and the time of its last chunk); a writer
 * pauses a reading source and resumes a paused or failed one (the server refuses a reader, and
 * the refusal is shown).
 */
export function SourcesPage({ continuity }: { continuity: string }) {
  const log = useContinuityLog(continuity);
  const fold = useFold(continuity, log.events, () => new SourcesFold());
  const sources = [...fold.sources.values()];
  const [changeError, setChangeError] = useState<ApiError | undefined>();
  const change = (source: string, to: "pause" | "resume") => {
    changeSource(continuity, source, to).then(
      () => setChangeError(undefined),
      (failure: ApiError) => setChangeError(failure),
    );
  };
  return (
    <section aria-label="Sources">
      {log.error ? <ErrorBanner error={log.error} title="Log" /> : null}
      {changeError ? <ErrorBanner error={changeError} title="Not changed" /> : null}
      {sources.length === 0 ? <p className="empty">This continuity has no sources.</p> : null}
      {sources.length > 0 ? (
        <table className="grid" aria-label="Sources">
          <thead>
            <tr>
              <th>source</th>
              <th>kind</th>
              <th>status</th>
              <th>cursor</th>
              <th>chunks read</th>
              <th>delivered</th>
              <th>lag</th>
              <th>lines / bytes</th>
              <th>last chunk</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {sources.map((source) => {
              const lag = Math.max(0, source.chunks - source.delivered);
              return (
                <tr key={source.id} data-source={source.id}>
                  <td className="mono" title={source.target}>
                    {source.id}
                  </td>
                  <td>{source.kind}</td>
                  <td>
                    <span className={`badge ${source.status}`}>{source.status}</span>
                    {source.error ? <div className="source-error">{source.error}</div> : null}
                  </td>
                  <td className="mono">{source.cursor ?? "—"}</td>
                  <td>{count(source.chunks)}</td>
                  <td>{count(source.delivered)}</td>
                  <td className={lag > 0 ? "lagging" : undefined}>
                    {lag === 0 ? "up to date" : `${count(lag)} chunks`}
                  </td>
                  <td>
                    {count(source.lines)} / {count(source.bytes)}
                  </td>
                  <td>{source.lastChunkAt ? clock(source.lastChunkAt) : "—"}</td>
                  <td>
                    <SourceControl source={source} change={change} />
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

/** The button that pauses a reading source or resumes a paused or failed one; none otherwise. */
function SourceControl(props: {
  source: SourceInfo;
  change(source: string, to: "pause" | "resume"): void;
}) {
  const { source, change } = props;
  const to =
    source.status === "added" || source.status === "running"
      ? "pause"
      : source.status === "paused" || source.status === "failed"
        ? "resume"
        : undefined;
  if (!to) return null;
  return (
    <button
      type="button"
      className="secondary"
      aria-label={`${to === "pause" ? "Pause" : "Resume"} ${source.id}`}
      onClick={() => change(source.id, to)}
    >
      {to === "pause" ? "Pause" : "Resume"}
    </button>
  );
}

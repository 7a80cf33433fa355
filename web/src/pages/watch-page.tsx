import { useEffect, useState } from "react";
import { type ApiError, artifactObjectUrl, readWatchSettings, type WatchSettings } from "../api.js";
import { ErrorBanner } from "../components/error-banner.js";
import { LinePlot } from "../components/line-plot.js";
import { SettingsForm } from "../components/settings-form.js";
import { WatchFold, type WatchFrame } from "../fold/watch.js";
import { clock } from "../format.js";
import { useContinuityLog, useFold } from "../log/use-log.js";

/**
 * Stream watch: the latest frame looked at, the rolling notes and the running summary older notes
 * were compacted into, the commentary (spoken or held back, and why), the change score over time
 * against the change threshold and static floor, and the settings form.
 */
export function WatchPage({ continuity }: { continuity: string }) {
  const log = useContinuityLog(continuity);
  const fold = useFold(continuity, log.events, () => new WatchFold());
  const [settings, setSettings] = useState<WatchSettings | undefined>();
  const [settingsError, setSettingsError] = useState<ApiError | undefined>();
  useEffect(() => {
    let live = true;
    readWatchSettings(continuity).then(
      (found) => live && setSettings(found),
      (failure: ApiError) => live && setSettingsError(failure),
    );
    return () => {
      live = false;
    };
  }, [continuity]);
  const inForce = (settings ?? fold.settings ?? {}) as Record<string, unknown>;
  const rule = (name: string, label: string, color: string) =>
    typeof inForce[name] === "number" ? [{ y: inForce[name] as number, name: label, color }] : [];
  return (
    <section aria-label="Stream watch" className="watch">
      {log.error ? <ErrorBanner error={log.error} title="Log" /> : null}
      {fold.failure ? (
        <div className="error-banner" role="alert">
          {fold.failure.call} call failed at {clock(fold.failure.ts)}: {fold.failure.message}
        </div>
      ) : null}
      <div className="watch-grid">
        <div>
          <h2>
            Latest frame {fold.active ? <span className="badge running">watching</span> : null}
          </h2>
          {fold.latestFrame ? (
            <Frame continuity={continuity} frame={fold.latestFrame} />
          ) : (
            <p className="empty">No frame yet.</p>
          )}
          <h2>Change score</h2>
          <LinePlot
            label="Change score over time"
            formatX={clock}
            formatY={(value) => value.toFixed(3)}
            series={[
              {
                name: "change score",
                color: "var(--accent)",
                points: fold.scores.map((s) => ({ x: s.at, y: s.score })),
              },
            ]}
            rules={[
              ...rule("changeThreshold", "change threshold", "var(--bad)"),
              ...rule("staticFloor", "static floor", "var(--quiet)"),
            ]}
            marks={fold.scores.filter((s) => s.cut).map((s) => s.at)}
          />
        </div>
        <div>
          <h2>Rolling notes</h2>
          {fold.notes.length === 0 ? <p className="empty">No notes yet.</p> : null}
          <ol className="notes" aria-label="Rolling notes">
            {fold.notes.map((note) => (
              <li key={note.seq} className="note-item">
                <span className="mono quiet">{clock(note.ts)}</span> {note.text}{" "}
                <span className="quiet">
                  ({note.trigger ?? note.by}, score {note.score.toFixed(3)})
                </span>
              </li>
            ))}
          </ol>
          {fold.summary ? (
            <section aria-label="Notes summary">
              <h3>Summary of earlier notes</h3>
              <p className="summary">{fold.summary.text}</p>
            </section>
          ) : null}
          <h2>Commentary</h2>
          {fold.commentary.length === 0 ? <p className="empty">No commentary yet.</p> : null}
          <ol className="notes" aria-label="Commentary">
            {fold.commentary.slice(-20).map((entry) => (
              <li key={entry.seq} className={entry.text ? "note-item" : "note-item quiet"}>
                <span className="mono quiet">{clock(entry.ts)}</span>{" "}
                {entry.text ?? `held back (${entry.gate})`}{" "}
                <span className="quiet">({entry.trigger})</span>
              </li>
            ))}
          </ol>
        </div>
      </div>
      <h2>Settings</h2>
      {settingsError ? <ErrorBanner error={settingsError} title="Settings" /> : null}
      {settings ? (
        <SettingsForm continuity={continuity} settings={settings} onSaved={setSettings} />
      ) : null}
    </section>
  );
}

function Frame({ continuity, frame }: { continuity: string; frame: WatchFrame }) {
  const [url, setUrl] = useState<string | undefined>();
  const [error, setError] = useState<ApiError | undefined>();
  useEffect(() => {
    let live = true;
    let made: string | undefined;
    artifactObjectUrl(continuity, frame.hash).then(
      (found) => {
        made = found;
        if (live) setUrl(found);
        else URL.revokeObjectURL(found);
      },
      (failure: ApiError) => live && setError(failure),
    );
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [continuity, frame.hash]);
  return (
    <figure className="frame">
      {error ? <ErrorBanner error={error} title="Frame" /> : null}
      {url ? (
        <img
          src={url}
          alt={`Latest frame from ${frame.source}`}
          width={frame.width}
          height={frame.height}
        />
      ) : null}
      <figcaption className="quiet">
        {frame.source} · {frame.width}×{frame.height} · captured {clock(frame.at)}
      </figcaption>
    </figure>
  );
}

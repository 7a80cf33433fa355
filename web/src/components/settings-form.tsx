import { useEffect, useState } from "react";
import { type ApiError, type WatchSettings, writeWatchSettings } from "../api.js";
import { ErrorBanner } from "./error-banner.js";

/** A form value as typed: text for numbers and names, a flag for switches. */
type Draft = Record<string, string | boolean>;

function draftOf(settings: WatchSettings): Draft {
  return Object.fromEntries(
    Object.entries(settings).map(([key, value]) => [
      key,
      typeof value === "boolean" ? value : String(value),
    ]),
  );
}

/** The settings a draft changes, typed as the settings in force type them. */
export function changesOf(settings: WatchSettings, draft: Draft): WatchSettings {
  const changes: WatchSettings = {};
  for (const [key, value] of Object.entries(draft)) {
    const was = settings[key];
    if (typeof value === "boolean") {
      if (value !== was) changes[key] = value;
    } else if (typeof was === "number") {
      const trimmed = value.trim();
      // Anything that is not a number goes to the server as typed, for its message.
      const number = trimmed === "" ? Number.NaN : Number(trimmed);
      if (number !== was) changes[key] = Number.isNaN(number) ? trimmed : number;
    } else if (value !== (was ?? "")) changes[key] = value;
  }
  return changes;
}

/**
 * The stream-watch settings form: one field per setting in force (switches, numbers, model
 * names), sent as the changed settings only. The server validates them: a refusal (a value out of
 * its range, say) is shown with the server's own message and the form keeps what was typed.
 */
export function SettingsForm(props: {
  continuity: string;
  settings: WatchSettings;
  onSaved(settings: WatchSettings): void;
}) {
  const { continuity, settings, onSaved } = props;
  const [draft, setDraft] = useState<Draft>(() => draftOf(settings));
  const [error, setError] = useState<ApiError | undefined>();
  const [saved, setSaved] = useState(false);
  const [saving, setSaving] = useState(false);
  useEffect(() => setDraft(draftOf(settings)), [settings]);
  const changes = changesOf(settings, draft);
  const dirty = Object.keys(changes).length > 0;
  const submit = async () => {
    setSaving(true);
    setSaved(false);
    try {
      const next = await writeWatchSettings(continuity, changes);
      setError(undefined);
      setSaved(true);
      onSaved(next);
    } catch (failure) {
      setError(failure as ApiError);
    } finally {
      setSaving(false);
    }
  };
  return (
    <form
      className="settings"
      aria-label="Stream-watch settings"
      noValidate
      onSubmit={(event) => {
        event.preventDefault();
        void submit();
      }}
    >
      {Object.entries(draft).map(([key, value]) =>
        typeof value === "boolean" ? (
          <label key={key} className="check">
            <input
              type="checkbox"
              name={key}
              checked={value}
              onChange={(event) => setDraft({ ...draft, [key]: event.currentTarget.checked })}
            />
            <span className="mono">{key}</span>
          </label>
        ) : (
          <label key={key}>
            <span className="mono">{key}</span>
            <input
              name={key}
              type="text"
              inputMode={typeof settings[key] === "number" ? "decimal" : undefined}
              value={value}
              aria-invalid={error?.message.includes(key) ? true : undefined}
              onChange={(event) => setDraft({ ...draft, [key]: event.currentTarget.value })}
            />
          </label>
        ),
      )}
      {error ? <ErrorBanner error={error} title="Not saved" /> : null}
      <div className="form-buttons">
        <button type="submit" disabled={!dirty || saving}>
          Save
        </button>
        <button
          type="button"
          className="secondary"
          disabled={!dirty}
          onClick={() => setDraft(draftOf(settings))}
        >
          Reset
        </button>
        {saved && !dirty ? (
          <span className="good" role="status">
            Saved.
          </span>
        ) : null}
      </div>
    </form>
  );
}

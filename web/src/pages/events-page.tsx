import { useState } from "react";
import type { SpoolEvent } from "../api.js";
import { ErrorBanner } from "../components/error-banner.js";
import { clock, shortJson } from "../format.js";
import { useContinuityLog } from "../log/use-log.js";

const SHOWN = 500;

/** What the event log is filtered by. */
interface Filters {
  /** A type or its family (`action`, `action.failed`); empty: all. */
  type: string;
  /** A stream kind; empty: all. */
  stream: string;
  /** Text anywhere in the event's type, stream id, actor or data. */
  text: string;
  /** Show `token.delta` and other droppable events. */
  droppable: boolean;
}

/** Whether `event` passes `filters`. */
export function matches(event: SpoolEvent, filters: Filters): boolean {
  if (!filters.droppable && event.criticality === "droppable") return false;
  if (filters.type && event.type !== filters.type && !event.type.startsWith(`${filters.type}.`)) {
    return false;
  }
  if (filters.stream && event.stream.kind !== filters.stream) return false;
  if (filters.text) {
    const needle = filters.text.toLowerCase();
    const haystack = `${event.type} ${event.stream.id} ${event.actor ?? ""} ${JSON.stringify(event.data)}`;
    if (!haystack.toLowerCase().includes(needle)) return false;
  }
  return true;
}

/**
 * The raw event log, live: seq, time, type, stream, actor and data, filtered by type family,
 * stream kind and text, droppable events (token deltas) hidden unless asked for. The newest
 * matching events first; a row opens to its whole data.
 */
export function EventsPage({ continuity }: { continuity: string }) {
  const log = useContinuityLog(continuity);
  const [filters, setFilters] = useState<Filters>({
    type: "",
    stream: "",
    text: "",
    droppable: false,
  });
  const families = [...new Set(log.events.map((event) => event.type.split(".")[0]!))].sort();
  const types = [...new Set(log.events.map((event) => event.type))].sort();
  const shown: SpoolEvent[] = [];
  for (let index = log.events.length - 1; index >= 0 && shown.length < SHOWN; index--) {
    const event = log.events[index]!;
    if (matches(event, filters)) shown.push(event);
  }
  const set = (change: Partial<Filters>) => setFilters((previous) => ({ ...previous, ...change }));
  return (
    <section aria-label="Events">
      {log.error ? <ErrorBanner error={log.error} title="Log" /> : null}
      <form className="filters" onSubmit={(event) => event.preventDefault()}>
        <label>
          type
          <select
            value={filters.type}
            onChange={(event) => set({ type: event.currentTarget.value })}
          >
            <option value="">all</option>
            {families.map((family) => (
              <option key={family} value={family}>
                {family}.*
              </option>
            ))}
            {types.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </label>
        <label>
          stream
          <select
            value={filters.stream}
            onChange={(event) => set({ stream: event.currentTarget.value })}
          >
            <option value="">all</option>
            {["continuity", "thread", "step", "task", "source", "worker"].map((kind) => (
              <option key={kind} value={kind}>
                {kind}
              </option>
            ))}
          </select>
        </label>
        <label>
          search
          <input
            type="search"
            value={filters.text}
            placeholder="text in type, stream, actor or data"
            onChange={(event) => set({ text: event.currentTarget.value })}
          />
        </label>
        <label className="check">
          <input
            type="checkbox"
            checked={filters.droppable}
            onChange={(event) => set({ droppable: event.currentTarget.checked })}
          />
          token deltas
        </label>
        <span className="quiet">
          {shown.length === SHOWN ? `newest ${SHOWN} shown` : `${shown.length} shown`} of{" "}
          {log.events.length}
        </span>
      </form>
      <table className="grid events" aria-label="Event log">
        <thead>
          <tr>
            <th>seq</th>
            <th>time</th>
            <th>type</th>
            <th>stream</th>
            <th>actor</th>
            <th>data</th>
          </tr>
        </thead>
        <tbody>
          {shown.map((event) => (
            <EventRow key={event.seq} event={event} />
          ))}
        </tbody>
      </table>
    </section>
  );
}

function EventRow({ event }: { event: SpoolEvent }) {
  const [open, setOpen] = useState(false);
  const family = event.type.split(".")[0];
  return (
    <tr className={`event ${family}`} data-type={event.type}>
      <td className="mono">{event.seq}</td>
      <td className="mono">{clock(event.ts)}</td>
      <td className="mono type">{event.type}</td>
      <td className="mono">
        {event.stream.kind}:{event.stream.id}
      </td>
      <td className="mono">{event.actor ?? ""}</td>
      <td className="mono data">
        <button type="button" className="link" aria-expanded={open} onClick={() => setOpen(!open)}>
          {open ? "▾" : "▸"}
        </button>
        {open ? <pre>{JSON.stringify(event.data, null, 2)}</pre> : shortJson(event.data, 120)}
      </td>
    </tr>
  );
}

import { canonicalJson, type PreparedEvent, type SpoolEvent } from "../spec/index.js";

/**
 * The canonical JSON a backend stored as an event's data, kept beside the event it wrote (while
 * the event lives): a read answered from memory parses it instead of serialising the data again.
 */
const storedJsonOf = new WeakMap<SpoolEvent, string>();

/** Remembers `json` as the data `event` was stored with. */
export function rememberStoredData(event: SpoolEvent, json: string): void {
  storedJsonOf.set(event, json);
}

/** The length of the canonical JSON `event`'s data was stored with, when it is remembered. */
export function storedDataLength(event: SpoolEvent): number | undefined {
  return storedJsonOf.get(event)?.length;
}

/** The canonical JSON `event`'s data was stored with (remembered, or made again). */
export function storedJson(event: SpoolEvent): string {
  return storedJsonOf.get(event) ?? canonicalJson(event.data);
}

/** Canonical JSON of queued events' data, made before their write (a read ahead needed it). */
const queuedJson = new WeakMap<PreparedEvent, string>();

/**
 * The canonical JSON of `event`'s data, made once: a read ahead of a queued event makes it, and
 * the write that stores the event takes it from here instead of serialising the data again.
 */
export function canonicalData(event: PreparedEvent, keep = false): string {
  let json = queuedJson.get(event);
  if (json === undefined) {
    json = canonicalJson(event.data);
    if (keep) queuedJson.set(event, json);
  }
  return json;
}

/**
 * `event` with its data as a read of the store gives it (parsed from `json()`, its canonical
 * JSON), parsed only when first asked for: a thread catching up reads the data of the events it
 * folds, and skips the large ones it ignores (a step's `context.compiled`).
 */
export function withStoredData(event: SpoolEvent, json: () => string): SpoolEvent {
  const copy = { ...event };
  let parsed: unknown;
  let done = false;
  Object.defineProperty(copy, "data", {
    enumerable: true,
    configurable: true,
    get() {
      if (!done) {
        parsed = JSON.parse(json());
        done = true;
      }
      return parsed;
    },
    // Whoever was given the event may change it, as any plain event.
    set(value: unknown) {
      parsed = value;
      done = true;
    },
  });
  return copy;
}

import { canonicalJson, type PreparedEvent, type SpoolEvent } from "../spec/index.js";

/**
 * The canonical JSON a backend stored as an event's data, kept beside the event it wrote (while
 * the event lives): a read answered from memory parses it instead of serialising the data again.
 */
const storedJson = new WeakMap<SpoolEvent, string>();

/** Remembers `json` as the data `event` was stored with. */
export function rememberStoredData(event: SpoolEvent, json: string): void {
  storedJson.set(event, json);
}

/** The length of the canonical JSON `event`'s data was stored with, when it is remembered. */
export function storedDataLength(event: SpoolEvent): number | undefined {
  return storedJson.get(event)?.length;
}

/** The data of `event` as a read of the store gives it: parsed from its canonical JSON. */
export function dataAsStored(event: SpoolEvent, canonical: (value: unknown) => string): unknown {
  return JSON.parse(storedJson.get(event) ?? canonical(event.data));
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

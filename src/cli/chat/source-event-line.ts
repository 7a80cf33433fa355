import type { EventData, SpoolEvent } from "../../spec/index.js";

/** What a rotation means for the reader, by its reason. */
const ROTATED: Record<EventData<"source.rotated">["reason"], string> = {
  renamed: "rotated (renamed away): reading the new file from its start",
  truncated: "truncated in place: reading it from its start",
  recreated: "created again: reading it from its start",
  deleted: "deleted: waiting for it to be created again",
  restarted: "restarted: its output from here on is new",
};

/**
 * The one line a source's event shows as beside the conversation (`spool watch`, `spool tail`),
 * or `undefined` for those that show nothing (a chunk: its delivery turn says what arrived; a
 * start, pause or removal: the log and `spool sources` have them):
 *
 * - `source.rotated`: `↻ log: truncated in place: reading it from its start`
 * - `source.failed`, not final (the source goes on): `! log: <message>` and when it retries
 * - `source.failed`, final: `✗ log stopped: <message>`
 * - `source.exhausted`: `■ data: its input has ended`
 */
export function sourceEventLine(event: SpoolEvent): string | undefined {
  switch (event.type) {
    case "source.rotated": {
      const data = event.data as EventData<"source.rotated">;
      return `↻ ${data.source_id}: ${ROTATED[data.reason]}`;
    }
    case "source.failed": {
      const data = event.data as EventData<"source.failed">;
      if (data.final) return `✗ ${data.source_id} stopped: ${data.error.message}`;
      const retry =
        data.retry_in_ms !== undefined ? ` (again in ${seconds(data.retry_in_ms)})` : "";
      return `! ${data.source_id}: ${data.error.message}${retry}`;
    }
    case "source.exhausted": {
      const data = event.data as EventData<"source.exhausted">;
      return `■ ${data.source_id}: its input has ended`;
    }
    default:
      return undefined;
  }
}

function seconds(ms: number): string {
  return ms < 1_000 ? `${ms} ms` : `${Math.round(ms / 100) / 10} s`;
}

import type { EventData } from "../../spec/index.js";

/** What a delivery turn records of what it brought (`turn.added`'s `sources` and `ends`). */
export interface DeliveryRecord {
  sources?: EventData<"turn.added">["sources"];
  ends?: EventData<"turn.added">["ends"];
}

/** Whether a turn is a source's delivery: origin `source`, or a `sources` record. */
export function isDeliveryTurn(origin: string | undefined, data: DeliveryRecord): boolean {
  return origin === "source" || data.sources !== undefined;
}

/**
 * The one line a delivery turn shows as, instead of its digest: per source its chunks, lines and
 * the pattern matches that are not zero, then the ends it announces, e.g.
 * `▸ log: chunks 12–14 · 1,500 lines · error 37` or `▸ data: chunk 9 · 40 lines · input ended`.
 * A log written before turns recorded their counts shows the chunks alone; a turn that records
 * nothing at all (neither chunks nor ends) shows its actor and the first line of its text.
 */
export function deliveryLine(actor: string, text: string, data: DeliveryRecord): string {
  const parts = new Map<string, string[]>();
  const partOf = (id: string) => {
    let found = parts.get(id);
    if (!found) {
      found = [];
      parts.set(id, found);
    }
    return found;
  };
  for (const entry of data.sources ?? []) {
    const own = partOf(entry.source_id);
    own.push(
      entry.from_chunk === entry.to_chunk
        ? `chunk ${entry.from_chunk}`
        : `chunks ${entry.from_chunk}–${entry.to_chunk}`,
    );
    if (entry.lines !== undefined) own.push(plural(entry.lines, "line"));
    for (const [name, count] of Object.entries(entry.matches ?? {})) {
      if (count > 0) own.push(`${name} ${thousands(count)}`);
    }
  }
  for (const end of data.ends ?? []) {
    partOf(end.source_id).push(end.status === "exhausted" ? "input ended" : "failed and stopped");
  }
  if (parts.size === 0) {
    const first = text.trim().split("\n")[0] ?? "";
    return `▸ ${actor}: ${first}`;
  }
  return `▸ ${[...parts].map(([id, own]) => `${id}: ${own.join(" · ")}`).join("; ")}`;
}

function thousands(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

function plural(count: number, noun: string): string {
  return `${thousands(count)} ${noun}${count === 1 ? "" : "s"}`;
}

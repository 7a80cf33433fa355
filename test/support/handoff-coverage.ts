/**
 * The handoff invariant, checked against a whole log: at every handoff, each message of the old
 * thread (as the runtime's own fold builds it from every event before the continuation's seed) is
 * either carried verbatim into the continuation, or covered by a summary of the continuation's
 * chain whose summarizer input held it (directly, or through the summary it was an update of),
 * and, for a message of the old thread itself, lies inside that summary's event range. A message
 * cut to an artifact (`context.input-cut`) is covered by a summarizer that read the whole input or
 * any of its cut forms (one per cut: a tighter limit later cuts it again).
 */
import { isDeepStrictEqual } from "node:util";
import {
  bundleManifest,
  CONTINUE_TEXT,
  type ContextMessage,
  messageToSeed,
  renderTranscript,
} from "../../src/continuity/index.js";
import type { EventStore } from "../../src/log/index.js";
import { ThreadHistory } from "../../src/runtime/index.js";
import type { EventData, SpoolEvent } from "../../src/spec/index.js";

/** One message of an old thread that no continuation keeps. */
export interface UncoveredMessage {
  from: string;
  continuation: string;
  seq: number;
  role: string;
  text: string;
}

/** What `checkHandoffCoverage` found. */
export interface HandoffCoverage {
  /** Handoffs checked (one per `handoff.seeded`). */
  handoffs: number;
  /** Messages checked over all handoffs. */
  messages: number;
  uncovered: UncoveredMessage[];
}

/** Checks every handoff of `continuity` in `store` (see the file's comment). */
export async function checkHandoffCoverage(
  store: EventStore,
  continuity: string,
): Promise<HandoffCoverage> {
  const events: SpoolEvent[] = [];
  for await (const event of store.read({ continuity })) events.push(event);
  const inputs = await summarizerInputs(store, events);
  const completed = new Map<string, EventData<"summary.completed">>();
  for (const event of events) {
    if (event.type === "summary.completed") {
      const data = event.data as EventData<"summary.completed">;
      completed.set(data.id, data);
    }
  }
  /** The summarizer inputs a summary rests on: its own, and those of the summaries it updated. */
  const inputsOf = (id: string): string[] => {
    const found: string[] = [];
    for (let at: string | undefined = id; at !== undefined; at = completed.get(at)?.previous) {
      const input = inputs.get(at);
      if (input !== undefined) found.push(input);
    }
    return found;
  };

  const result: HandoffCoverage = { handoffs: 0, messages: 0, uncovered: [] };
  for (const seeded of events.filter((event) => event.type === "handoff.seeded")) {
    const data = seeded.data as EventData<"handoff.seeded">;
    result.handoffs += 1;
    // The history as the runtime folds it, and the same without its input cuts: a summarizer
    // that ran before a cut read the whole input, which covers its cut form.
    // A message cut more than once (a tighter limit later) had each form in between too.
    const history = new ThreadHistory(data.from);
    const uncut = new ThreadHistory(data.from);
    const cutForms = new Map<number, string[]>();
    for (const event of events) {
      if (event.seq >= seeded.seq) break;
      history.apply(event);
      if (event.type !== "context.input-cut") {
        uncut.apply(event);
        continue;
      }
      const { seq } = event.data as EventData<"context.input-cut">;
      for (const entry of history.view().messages) {
        if (entry.seq !== seq || entry.thread !== undefined) continue;
        cutForms.set(seq, [...(cutForms.get(seq) ?? []), renderTranscript([entry.message])]);
      }
    }
    const carried = data.trailing;
    const wholes = uncut.view().messages;
    for (const [index, entry] of history.view().messages.entries()) {
      if (isResumeMarker(entry)) continue;
      result.messages += 1;
      const seed = messageToSeed(entry);
      if (carried.some((kept) => isDeepStrictEqual(kept, seed))) continue;
      const forms = [renderTranscript([entry.message])];
      const whole = wholes[index];
      if (whole && whole.seq === entry.seq) {
        const text = renderTranscript([whole.message]);
        if (text !== forms[0]) forms.push(text);
      }
      if (entry.thread === undefined) forms.push(...(cutForms.get(entry.seq) ?? []));
      const covered = data.summaries.some((summary) => {
        const own = entry.thread === undefined;
        if (
          own &&
          (summary.covers.thread !== data.from ||
            entry.seq < summary.covers.from_seq ||
            entry.seq > summary.covers.to_seq)
        ) {
          return false;
        }
        return forms.some(
          (text) => text === "" || inputsOf(summary.id).some((input) => input.includes(text)),
        );
      });
      if (!covered) {
        result.uncovered.push({
          from: data.from,
          continuation: seeded.stream.id,
          seq: entry.seq,
          role: entry.message.role,
          text: forms[0]!.slice(0, 200),
        });
      }
    }
  }
  return result;
}

/** The synthetic "continue" message a resumed continuation starts with (no event of its own). */
function isResumeMarker(entry: ContextMessage): boolean {
  return (
    entry.thread !== undefined &&
    entry.message.role === "user" &&
    entry.message.content === CONTINUE_TEXT
  );
}

/**
 * Each summarizer run's input as the log records it: the system prompt of its first step's
 * compiled bundle (the summarizer's instructions with `transcript_content` filled in).
 */
async function summarizerInputs(
  store: EventStore,
  events: readonly SpoolEvent[],
): Promise<Map<string, string>> {
  const inputs = new Map<string, string>();
  for (const event of events) {
    if (event.type !== "context.compiled" || event.stream.kind !== "step") continue;
    const match = /^(.*@summary\d+):(\d+)$/.exec(event.stream.id);
    if (!match || inputs.has(match[1]!)) continue;
    const manifest = await bundleManifest(
      store.artifacts,
      event.data as EventData<"context.compiled">,
    );
    if (!manifest) continue;
    inputs.set(match[1]!, (await store.artifacts.get(manifest.system)).toString("utf8"));
  }
  return inputs;
}

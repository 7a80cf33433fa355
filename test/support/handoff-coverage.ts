/**
 * The handoff invariant, checked against a whole log: at every handoff, each message of the old
 * thread (as the runtime's own fold builds it from every event before the continuation's seed) is
 * either carried verbatim into the continuation, or covered by a summary of the continuation's
 * chain whose summarizer input held it (directly, or through the summary it was an update of),
 * and, for a message of the old thread itself, lies inside that summary's event range.
 */
import { isDeepStrictEqual } from "node:util";
import {
  type BundleManifest,
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
    const history = new ThreadHistory(data.from);
    for (const event of events) {
      if (event.seq >= seeded.seq) break;
      history.apply(event);
    }
    const carried = data.trailing;
    for (const entry of history.view().messages) {
      if (isResumeMarker(entry)) continue;
      result.messages += 1;
      const seed = messageToSeed(entry);
      if (carried.some((kept) => isDeepStrictEqual(kept, seed))) continue;
      const text = renderTranscript([entry.message]);
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
        return text === "" || inputsOf(summary.id).some((input) => input.includes(text));
      });
      if (!covered) {
        result.uncovered.push({
          from: data.from,
          continuation: seeded.stream.id,
          seq: entry.seq,
          role: entry.message.role,
          text: text.slice(0, 200),
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
    const bundle = (event.data as EventData<"context.compiled">).bundle;
    if (!bundle) continue;
    const manifest = JSON.parse(
      (await store.artifacts.get(bundle.hash)).toString("utf8"),
    ) as BundleManifest;
    inputs.set(match[1]!, (await store.artifacts.get(manifest.system)).toString("utf8"));
  }
  return inputs;
}

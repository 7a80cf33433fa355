import { isEvent, type SpoolEvent } from "../spec/index.js";
import { type WatchAnswer, WatchCallError, type WatchModel } from "./watch-model.js";

/**
 * What one recorded call gave: an answer, or the error it failed with; and for a compaction, how
 * many note-taker looks the log holds before its answer (a compaction runs beside the
 * note-taker, so its answer landed between two of them).
 */
type Recorded = ({ answer: WatchAnswer } | { error: WatchCallError }) & { afterLooks?: number };

/** The recorded answers of a log, per kind of call, in `seq` order. */
export interface RecordedWatchCalls {
  readonly describe: readonly Recorded[];
  readonly compact: readonly Recorded[];
  readonly comment: readonly Recorded[];
}

/**
 * The answers a log's watch events record, per kind of call: a note-taker look is a `note.added`
 * by the note-taker, a `note.skipped` or a `watch.failed` (`note`); a compaction a
 * `notes.compacted` or a `watch.failed` (`compaction`); a commentary its `[[NOTE: …]]` notes (the
 * `note.added` events by `commentary` just before it) with a `commentary.added`, a
 * `commentary.skipped` (gate `skip`: `[SKIP]`) or a `watch.failed` (`commentary`). Pure.
 */
export function recordedWatchCalls(events: Iterable<SpoolEvent>): RecordedWatchCalls {
  const describe: Recorded[] = [];
  const compact: Recorded[] = [];
  const comment: Recorded[] = [];
  let inline: string[] = [];
  for (const event of events) {
    if (isEvent(event, "note.added")) {
      if (event.data.by === "commentary") inline.push(event.data.text);
      else describe.push({ answer: answerOf(event.data.text, event.data) });
    } else if (isEvent(event, "note.skipped")) {
      describe.push({ answer: answerOf(event.data.text, event.data) });
    } else if (isEvent(event, "notes.compacted")) {
      compact.push({
        answer: answerOf(event.data.summary, event.data),
        afterLooks: describe.length,
      });
    } else if (isEvent(event, "commentary.added") || isEvent(event, "commentary.skipped")) {
      const gate = (event.data as { gate?: string }).gate;
      if (event.type === "commentary.skipped" && gate !== "skip") continue;
      const said =
        event.type === "commentary.added" ? (event.data as { text: string }).text : "[SKIP]";
      const notes = inline.map((note) => `[[NOTE: ${note}]]`).join("\n");
      comment.push({ answer: answerOf(notes ? `${said}\n${notes}` : said, event.data) });
      inline = [];
    } else if (isEvent(event, "watch.failed")) {
      const { code, message, retryable } = event.data.error;
      const failure = { error: new WatchCallError(code, message, retryable ?? false) };
      if (event.data.call === "note") describe.push(failure);
      else if (event.data.call === "compaction")
        compact.push({ ...failure, afterLooks: describe.length });
      else comment.push(failure);
    }
  }
  return { describe, compact, comment };
}

/** A replaying `WatchModel`: its calls per kind, and `release` for compactions still held. */
export interface RecordedWatchModel extends WatchModel {
  readonly calls: { describe: number; compact: number; comment: number };
  /** Lets every held compaction answer (call when the replayed stream ends). */
  release(): void;
}

/**
 * A `WatchModel` that answers from a log (`recordedWatchCalls`), in order, and calls nothing: the
 * stream watch's replay. A compaction's answer is held until as many note-taker looks were
 * replayed as the log holds before it, so notes that arrived while it ran arrive again while it
 * runs. A call beyond what the log recorded rejects with `replay.diverged` (the replayed
 * decisions differ from the recorded ones), which the loop logs as `watch.failed`.
 */
export function recordedWatchModel(events: Iterable<SpoolEvent>): RecordedWatchModel {
  const recorded = recordedWatchCalls(events);
  const calls = { describe: 0, compact: 0, comment: 0 };
  const held: { until: number; resolve: () => void }[] = [];
  const next = async (kind: keyof RecordedWatchCalls): Promise<WatchAnswer> => {
    const index = calls[kind]++;
    if (kind === "describe") {
      for (const wait of held.splice(0)) {
        if (calls.describe >= wait.until) wait.resolve();
        else held.push(wait);
      }
    }
    const entry = recorded[kind][index];
    if (entry?.afterLooks !== undefined && calls.describe < entry.afterLooks) {
      const until = entry.afterLooks;
      await new Promise<void>((resolve) => held.push({ until, resolve }));
    }
    if (entry === undefined) {
      throw new WatchCallError(
        "replay.diverged",
        `replay asked for ${kind} call ${index + 1}, but the log records ${recorded[kind].length}`,
        false,
      );
    }
    if ("error" in entry) throw entry.error;
    return entry.answer;
  };
  return {
    calls,
    release() {
      for (const wait of held.splice(0)) wait.resolve();
    },
    describe: () => next("describe"),
    compact: () => next("compact"),
    comment: () => next("comment"),
  };
}

function answerOf(
  text: string,
  data: { model?: string; usage?: WatchAnswer["usage"] },
): WatchAnswer {
  return {
    text,
    ...(data.model ? { model: data.model } : {}),
    ...(data.usage ? { usage: data.usage } : {}),
  };
}

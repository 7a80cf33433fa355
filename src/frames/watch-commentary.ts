import type { AnyNewEvent, EventData } from "../spec/index.js";
import { parseCommentaryReply } from "./commentary-reply.js";
import type { CommentaryTrigger } from "./commentary-schedule.js";
import type { ScoredFrame } from "./frame-types.js";
import type { StreamWatchOptions } from "./stream-watch.js";
import type { WatchAnswer } from "./watch-model.js";
import type { NoteFrame } from "./watch-state.js";

/** What one commentary needs from its watch. */
export interface CommentaryRun {
  scored: ScoredFrame;
  trigger: CommentaryTrigger;
  frame: NoteFrame;
  /** The notes block as it stands before the call. */
  notes: string;
  options: StreamWatchOptions;
  append(event: Omit<AnyNewEvent, "continuity">): Promise<unknown>;
  failed(error: unknown, frame: NoteFrame, trigger: CommentaryTrigger): Promise<void>;
}

/**
 * Runs one commentary that no gate holds back: keeps the frame, asks the model with the notes,
 * the conversation and the frame, then logs each `[[NOTE: …]]` as a `note.added` (by
 * `commentary`) and the answer as `commentary.added`, or `commentary.skipped` (gate `skip`) for
 * `[SKIP]`. A failed call is `watch.failed`. Never throws.
 */
export async function runCommentary(run: CommentaryRun): Promise<void> {
  const { options, scored, frame, trigger } = run;
  let answer: WatchAnswer;
  try {
    await options.hooks.keep(scored.frame);
    const conversation = options.conversation ? await options.conversation() : "";
    answer = await options.model.comment({
      frame: scored.frame,
      notes: run.notes,
      conversation,
      ...(options.instructions ? { instructions: options.instructions } : {}),
    });
  } catch (error) {
    await run.failed(error, frame, trigger);
    return;
  }
  const reply = parseCommentaryReply(answer.text);
  const meta = {
    ...(answer.model ? { model: answer.model } : {}),
    ...(answer.usage ? { usage: answer.usage } : {}),
  };
  for (const note of reply.notes) {
    const data: EventData<"note.added"> = {
      text: note.slice(0, 4_000),
      frame,
      score: scored.change.score,
      by: "commentary",
    };
    await run.append({ type: "note.added", data });
  }
  if (reply.skip) {
    await run.append({
      type: "commentary.skipped",
      data: { trigger, gate: "skip", frame, ...meta },
    });
  } else {
    await run.append({
      type: "commentary.added",
      data: { text: reply.text.slice(0, 20_000), trigger, frame, ...meta },
    });
  }
}

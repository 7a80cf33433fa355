import type { EventStore } from "../log/index.js";
import type { AnyNewEvent, EventData, SpoolEvent } from "../spec/index.js";
import { type CommentaryGate, decideCommentary } from "./commentary-schedule.js";
import type { FrameRef, ScoredFrame } from "./frame-types.js";
import { decideNote, type NoteTrigger } from "./note-schedule.js";
import { runCommentary } from "./watch-commentary.js";
import type { WatchModel } from "./watch-model.js";
import { renderWatchNotes } from "./watch-notes-text.js";
import { changedWatchSettings, parseWatchSettings, type WatchSettings } from "./watch-settings.js";
import {
  emptyWatchState,
  foldWatchEvent,
  type NoteFrame,
  planCompaction,
  WATCH_EVENT_TYPES,
  type WatchState,
} from "./watch-state.js";

/**
 * What the frame side (the scorer and the frame store) does when the loops use a frame. The
 * scorer compares each new frame against the last frame the note-taker looked at, so it must be
 * told which one that was.
 */
export interface WatchHooks {
  /** The note-taker looked at `frame` (noted it, or found its note unchanged): the new baseline. */
  noted(frame: FrameRef): void;
  /**
   * An event is about to refer to `frame`: its bytes must stay in the artifact store. Resolves
   * once they are there (the model call that follows reads them).
   */
  keep(frame: FrameRef): Promise<void> | void;
}

/** What the session tells the commentary loop about the conversation at a moment. */
export interface WatchActivity {
  /** When the last turn arrived, from any actor or process (epoch ms, the frames' clock). */
  readonly lastUserInputAt?: number;
  /** A foreground run is going or turns wait for one. */
  readonly foregroundBusy: boolean;
}

/** What `StreamWatch.open` needs. */
export interface StreamWatchOptions {
  store: EventStore;
  continuity: string;
  /** The frame source's id (`screen`, `tab:t1`). */
  source: string;
  model: WatchModel;
  hooks: WatchHooks;
  /** The settings from the manifest (already validated and migrated). */
  settings: WatchSettings;
  /** Legacy keys the manifest's section held, for the start's `watch.settings-changed`. */
  migrated?: EventData<"watch.settings-changed">["migrated"];
  /**
   * The conversation now, for the commentary gates: asked when a commentary is due, right before
   * its gates are checked. A session reads it from the continuity's log (any actor, any process).
   * A rejection is told to `onError` and the commentary waits for the next frame.
   */
  activity(): WatchActivity | Promise<WatchActivity>;
  /**
   * The recent conversation as text (`User: …`, `Assistant: …`), for a commentary's context: a
   * session gives the foreground thread's newest messages from the log, text only, within a
   * token budget. A rejection fails the commentary (`watch.failed`).
   */
  conversation?(): Promise<string> | string;
  /** The agent's instructions, so commentary speaks as the agent. */
  instructions?: string;
  /** Where `frame.path` comes from: the file the frame source writes the latest frame to. */
  framePath?(frame: FrameRef): string | undefined;
  /** Told of an event the store refused (closed, lease lost): the loops go on without it. */
  onError?(error: unknown): void;
}

/** One loop's work: the frame it handles and the newest frame that came while it was busy. */
interface LoopSlot {
  running?: Promise<void>;
  next?: ScoredFrame;
}

/**
 * The stream watch of one continuity: the note-taker and commentary loops over one frame source's
 * scored frames, the rolling notes and the running summary. Every decision and every model output
 * is an event; the state is the fold of those events (`WatchState`), so a restart continues where
 * the log stops and a replay (with `recordedWatchModel`) rebuilds it without calling a model.
 *
 * The loops are independent: each handles one frame at a time (it awaits its model call, which
 * is the backpressure), and a loop that is busy when frames come takes the newest of them when
 * it is done. The note-taker never looks at the conversation; the commentary loop is held back by
 * its gates (`decideCommentary`). Compaction runs beside the note-taker, one at a time. Nothing
 * here throws once started: a failed model call is a `watch.failed` event.
 */
export class StreamWatch {
  readonly options: StreamWatchOptions;
  #state: WatchState;
  #latest: ScoredFrame | undefined;
  readonly #notes: LoopSlot = {};
  readonly #commentary: LoopSlot = {};
  #compaction: Promise<void> | undefined;
  /** The gate that last held a due commentary back, logged once until the next commentary. */
  #heldBy: CommentaryGate | undefined;
  #appending: Promise<unknown> = Promise.resolve();

  private constructor(options: StreamWatchOptions, state: WatchState) {
    this.options = options;
    this.#state = state;
  }

  /**
   * Folds the continuity's watch events, logs `watch.started` and the manifest's settings when
   * they differ from those in force (or at the very first start), and returns the watch.
   */
  static async open(options: StreamWatchOptions): Promise<StreamWatch> {
    let state = emptyWatchState(options.settings);
    for await (const event of options.store.read({
      continuity: options.continuity,
      types: WATCH_EVENT_TYPES,
    })) {
      state = foldWatchEvent(state, event);
    }
    const watch = new StreamWatch(options, state);
    // No settings event was folded: this is the continuity's first watch.
    const first = state.settings === options.settings;
    const changed = changedWatchSettings(state.settings, options.settings);
    if (first || changed.length > 0 || (options.migrated?.length ?? 0) > 0) {
      await watch.#append({
        type: "watch.settings-changed",
        data: {
          settings: { ...options.settings },
          changed: first ? Object.keys(options.settings) : changed,
          by: "manifest",
          ...(options.migrated?.length ? { migrated: options.migrated } : {}),
        },
      });
    }
    await watch.#append({ type: "watch.started", data: { source: options.source } });
    return watch;
  }

  /** The state now (the fold of every watch event so far). */
  get state(): WatchState {
    return this.#state;
  }

  /** The newest scored frame offered, or `undefined` before the first. */
  get latest(): ScoredFrame | undefined {
    return this.#latest;
  }

  /** The notes block for a model's context (`renderWatchNotes`): empty text before any note. */
  notesText(): string {
    return renderWatchNotes(this.#state);
  }

  /**
   * Hands both loops a frame. A loop that is idle decides on it now; a busy one takes the newest
   * frame offered once it is done. Resolves once both loops are idle again (a caller that awaits
   * each offer drives the loops deterministically; `run` does not await, so frames are dropped
   * while a loop is busy, as with a live source).
   */
  offer(scored: ScoredFrame): Promise<void> {
    this.#latest = scored;
    const notes = this.#schedule(this.#notes, scored, (frame) => this.#noteStep(frame));
    const commentary = this.#schedule(this.#commentary, scored, (frame) =>
      this.#commentaryStep(frame),
    );
    return Promise.all([notes, commentary]).then(() => undefined);
  }

  /**
   * Looks again at the newest frame at `now` when no new frame came (a static screen through a
   * screencast sends none): the note-taker decides on it as on a static frame (`idle` once
   * `noteIdleIntervalSeconds` passed). Does nothing before the first frame, while the note-taker
   * is busy, or when `now` is not after the newest frame's time. Commentary is not asked: it
   * decides on frames that arrive.
   */
  tick(now: number): Promise<void> {
    const latest = this.#latest;
    if (!latest || this.#notes.running !== undefined || now <= latest.frame.at) {
      return Promise.resolve();
    }
    const again: ScoredFrame = {
      frame: { ...latest.frame, at: now },
      change: { ...latest.change, score: 0, sceneCut: false, duplicate: true, forced: false },
    };
    return this.#schedule(this.#notes, again, (frame) => this.#noteStep(frame));
  }

  /**
   * Runs the loops over `frames` until they end or `signal` aborts, then waits for the work in
   * flight and logs `watch.stopped`. Never throws: a failing frame source ends the watch with its
   * error as the reason.
   */
  async run(frames: AsyncIterable<ScoredFrame>, signal?: AbortSignal): Promise<void> {
    let reason = "the frame source ended";
    try {
      for await (const scored of frames) {
        if (signal?.aborted) break;
        void this.offer(scored);
      }
      if (signal?.aborted) reason = String(signal.reason ?? "stopped");
    } catch (error) {
      reason = `the frame source failed: ${error instanceof Error ? error.message : String(error)}`;
    }
    await this.idle();
    await this.#append({ type: "watch.stopped", data: { source: this.options.source, reason } });
  }

  /** Resolves once neither loop nor a compaction is working. */
  async idle(): Promise<void> {
    while (
      this.#notes.running !== undefined ||
      this.#commentary.running !== undefined ||
      this.#compaction !== undefined
    ) {
      await Promise.all([this.#notes.running, this.#commentary.running, this.#compaction]);
    }
    await this.#appending;
  }

  /**
   * Changes settings at runtime: validates `changes` over the settings in force (`ConfigError`
   * naming each bad setting and its range), logs `watch.settings-changed` when anything changed
   * (with `who`'s actor and origin on the event, when given), and returns the settings now in
   * force. The next decision of each loop uses them.
   */
  async changeSettings(
    changes: Record<string, unknown>,
    by: "action" | "runtime" | "cli" | "http" = "runtime",
    who?: { actor: string; origin: string },
  ): Promise<WatchSettings> {
    const next = parseWatchSettings(changes, this.#state.settings);
    const changed = changedWatchSettings(this.#state.settings, next);
    if (changed.length > 0) {
      await this.#append({
        type: "watch.settings-changed",
        ...(who ? { actor: who.actor, origin: who.origin } : {}),
        data: { settings: { ...next }, changed, by },
      });
    }
    return this.#state.settings;
  }

  #schedule(
    slot: LoopSlot,
    scored: ScoredFrame,
    step: (scored: ScoredFrame) => Promise<void>,
  ): Promise<void> {
    if (slot.running !== undefined) {
      slot.next = scored;
      return slot.running;
    }
    const drive = async () => {
      let frame: ScoredFrame | undefined = scored;
      while (frame) {
        await step(frame);
        frame = slot.next;
        slot.next = undefined;
      }
      slot.running = undefined;
    };
    slot.running = drive();
    return slot.running;
  }

  async #noteStep(scored: ScoredFrame): Promise<void> {
    const { settings } = this.#state;
    if (!settings.enabled) return;
    const decision = decideNote(
      settings,
      this.#state.lastNoteAt !== undefined ? { lastNoteAt: this.#state.lastNoteAt } : {},
      scored,
      scored.frame.at,
    );
    if (!decision.fire) return;
    await this.#note(scored, decision.trigger);
  }

  async #note(scored: ScoredFrame, trigger: NoteTrigger): Promise<void> {
    const { model, hooks } = this.options;
    const frame = this.frameData(scored.frame);
    const score = scored.change.score;
    await hooks.keep(scored.frame);
    let answer: Awaited<ReturnType<WatchModel["describe"]>>;
    try {
      answer = await model.describe(scored.frame, this.#state.lastNoteText);
    } catch (error) {
      await this.#failed("note", error, frame, trigger);
      return;
    }
    const text = oneLine(answer.text);
    if (text === "") {
      await this.#failed("note", emptyAnswer(), frame, trigger);
      return;
    }
    const common = {
      text,
      frame,
      score,
      ...(answer.model ? { model: answer.model } : {}),
      ...(answer.usage ? { usage: answer.usage } : {}),
    };
    const last = this.#state.lastNoteText;
    if (last !== undefined && sameNote(last, text)) {
      await this.#append({
        type: "note.skipped",
        data: { ...common, trigger, reason: "duplicate" },
      });
    } else {
      await this.#append({
        type: "note.added",
        data: { ...common, trigger, by: "note-taker" },
      });
    }
    hooks.noted(scored.frame);
    this.#compactIfDue();
  }

  #compactIfDue(): void {
    if (this.#compaction !== undefined) return;
    const plan = planCompaction(this.#state);
    if (!plan) return;
    this.#compaction = (async () => {
      try {
        const answer = await this.options.model.compact(plan);
        const summary = answer.text.trim();
        if (summary === "") throw emptyAnswer();
        await this.#append({
          type: "notes.compacted",
          data: {
            summary: summary.slice(0, 20_000),
            from_seq: plan.fromSeq,
            to_seq: plan.toSeq,
            notes: plan.notes.length,
            ...(answer.model ? { model: answer.model } : {}),
            ...(answer.usage ? { usage: answer.usage } : {}),
          },
        });
      } catch (error) {
        await this.#failed("compaction", error);
      } finally {
        this.#compaction = undefined;
      }
    })();
  }

  async #commentaryStep(scored: ScoredFrame): Promise<void> {
    const { settings } = this.#state;
    if (!settings.enabled) return;
    const last =
      this.#state.lastCommentaryAt !== undefined
        ? { lastCommentaryAt: this.#state.lastCommentaryAt }
        : {};
    // Whether one is due does not depend on the conversation: ask for it only when one is.
    if (
      !decideCommentary(settings, { ...last, foregroundBusy: false }, scored, scored.frame.at).due
    )
      return;
    let activity: WatchActivity;
    try {
      activity = await this.options.activity();
    } catch (error) {
      this.options.onError?.(error);
      return;
    }
    const decision = decideCommentary(
      settings,
      {
        ...last,
        ...(activity.lastUserInputAt !== undefined
          ? { lastUserInputAt: activity.lastUserInputAt }
          : {}),
        foregroundBusy: activity.foregroundBusy,
      },
      scored,
      scored.frame.at,
    );
    if (!decision.due) return;
    if (decision.gate) {
      if (this.#heldBy === decision.gate) return;
      this.#heldBy = decision.gate;
      await this.#append({
        type: "commentary.skipped",
        data: { trigger: decision.trigger, gate: decision.gate },
      });
      return;
    }
    this.#heldBy = undefined;
    await runCommentary({
      scored,
      trigger: decision.trigger,
      frame: this.frameData(scored.frame),
      notes: this.notesText(),
      options: this.options,
      append: (event) => this.#append(event),
      failed: (error, frame, trigger) => this.#failed("commentary", error, frame, trigger),
    });
  }

  /** A frame as the watch events record it (with the latest frame's file, when known). */
  frameData(frame: FrameRef): NoteFrame {
    const path = this.options.framePath?.(frame);
    return {
      hash: frame.hash,
      width: frame.width,
      height: frame.height,
      at: frame.at,
      source: frame.source,
      ...(path ? { path } : {}),
    };
  }

  async #failed(
    call: "note" | "compaction" | "commentary",
    error: unknown,
    frame?: NoteFrame,
    trigger?: EventData<"watch.failed">["trigger"],
  ): Promise<void> {
    const info = error as { code?: unknown; message?: unknown; retryable?: unknown };
    await this.#append({
      type: "watch.failed",
      data: {
        call,
        error: {
          code:
            typeof info?.code === "string" && info.code !== "" ? info.code : "watch.call-failed",
          message: String(info?.message ?? error).slice(0, 4_000),
          ...(typeof info?.retryable === "boolean" ? { retryable: info.retryable } : {}),
        },
        ...(frame ? { frame } : {}),
        ...(trigger ? { trigger } : {}),
      },
    });
  }

  /**
   * Appends a watch event and folds it, in call order. A store that refuses (closed, lease lost)
   * leaves the state as it was; the loop goes on and the next event tries again.
   */
  #append(event: Omit<AnyNewEvent, "continuity">): Promise<SpoolEvent | undefined> {
    const appended = this.#appending.then(async () => {
      try {
        const stored = await this.options.store.append({
          ...event,
          continuity: this.options.continuity,
        } as AnyNewEvent);
        this.#state = foldWatchEvent(this.#state, stored);
        return stored;
      } catch (error) {
        this.options.onError?.(error);
        return undefined;
      }
    });
    this.#appending = appended;
    return appended;
  }
}

/** A note as one line: whitespace runs become one space, at most 4,000 characters. */
function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim().slice(0, 4_000);
}

/** Two notes are the same when they match after trimming, case and whitespace are set aside. */
function sameNote(a: string, b: string): boolean {
  return (
    a.replace(/\s+/g, " ").trim().toLowerCase() === b.replace(/\s+/g, " ").trim().toLowerCase()
  );
}

function emptyAnswer(): { code: string; message: string } {
  return { code: "watch.empty-answer", message: "the model answered with no text" };
}

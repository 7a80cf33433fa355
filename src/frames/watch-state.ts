import { type EventData, isEvent, type SpoolEvent } from "../spec/index.js";
import { DEFAULT_WATCH_SETTINGS, type WatchSettings } from "./watch-settings.js";

/** The frame a note was taken from, as `note.added` records it. */
export type NoteFrame = EventData<"note.added">["frame"];

/** One note in the rolling window or waiting for compaction, with its absolute log position. */
export interface NoteEntry {
  /** The `note.added` event's `seq`: the note's identity, never reused. */
  readonly seq: number;
  readonly text: string;
  readonly frame: NoteFrame;
  readonly score: number;
  readonly by: "note-taker" | "commentary";
}

/** What a compaction folds into the running summary: the evicted notes from `fromSeq` to `toSeq`. */
export interface CompactionPlan {
  readonly fromSeq: number;
  readonly toSeq: number;
  readonly notes: readonly NoteEntry[];
  /** The running summary the new one replaces (absent before the first compaction). */
  readonly summary?: string;
}

/**
 * The stream watch's state, a fold over the watch events by `seq` (`foldWatchEvent`): the
 * settings in force, the rolling notes, the notes evicted and not yet compacted, the running
 * summary, and what the schedules need. A restart or a replay folds the same log into the same
 * state.
 */
export interface WatchState {
  readonly settings: WatchSettings;
  /** The newest notes, oldest first, at most `settings.maxNoteEntries`. */
  readonly notes: readonly NoteEntry[];
  /** Notes evicted from `notes` that no `notes.compacted` covers yet, oldest first. */
  readonly pending: readonly NoteEntry[];
  /** The running summary of every note up to `summaryTo`. */
  readonly summary?: string;
  /** The last `seq` the summary covers (0: none). */
  readonly summaryTo: number;
  /** The text of the note-taker's last look (a note or a duplicate skipped), for the dedupe rule. */
  readonly lastNoteText?: string;
  /** The frame time of the note-taker's last look, epoch ms. */
  readonly lastNoteAt?: number;
  /** The frame time of the last commentary decision the model made (spoken or `[SKIP]`). */
  readonly lastCommentaryAt?: number;
  /** Notes taken, duplicates skipped, commentaries spoken and skipped: for reports. */
  readonly counts: WatchCounts;
  /** The frame of the newest note or commentary (what `spool frames` shows as the latest). */
  readonly latestFrame?: NoteFrame;
}

/** Running totals of a watch's decisions. */
export interface WatchCounts {
  readonly notes: number;
  readonly duplicates: number;
  readonly compactions: number;
  readonly commentaries: number;
  readonly skips: number;
}

/** The state before any watch event. */
export function emptyWatchState(settings: WatchSettings = DEFAULT_WATCH_SETTINGS): WatchState {
  return {
    settings,
    notes: [],
    pending: [],
    summaryTo: 0,
    counts: { notes: 0, duplicates: 0, compactions: 0, commentaries: 0, skips: 0 },
  };
}

/** The event types `foldWatchEvent` reads; others leave the state as it is. */
export const WATCH_EVENT_TYPES: readonly string[] = [
  "watch.started",
  "watch.settings-changed",
  "note.added",
  "note.skipped",
  "notes.compacted",
  "commentary.added",
  "commentary.skipped",
  "watch.failed",
];

/**
 * The state after `event`. A `note.added` joins the window; past `maxNoteEntries` the oldest move
 * to `pending`. A `notes.compacted` sets the summary and drops from `pending` exactly the notes
 * with `seq <= to_seq`: notes evicted while its call ran have larger `seq`s and stay pending for
 * the next one, so no note is lost. Pure; events must come in `seq` order.
 */
export function foldWatchEvent(state: WatchState, event: SpoolEvent): WatchState {
  if (isEvent(event, "note.added")) {
    const entry: NoteEntry = {
      seq: event.seq,
      text: event.data.text,
      frame: event.data.frame,
      score: event.data.score,
      by: event.data.by,
    };
    const fromTaker = event.data.by === "note-taker";
    return evict({
      ...state,
      notes: [...state.notes, entry],
      latestFrame: event.data.frame,
      counts: { ...state.counts, notes: state.counts.notes + 1 },
      ...(fromTaker ? { lastNoteText: event.data.text, lastNoteAt: event.data.frame.at } : {}),
    });
  }
  if (isEvent(event, "note.skipped")) {
    return {
      ...state,
      lastNoteText: event.data.text,
      lastNoteAt: event.data.frame.at,
      latestFrame: event.data.frame,
      counts: { ...state.counts, duplicates: state.counts.duplicates + 1 },
    };
  }
  if (isEvent(event, "notes.compacted")) {
    const to = event.data.to_seq;
    return {
      ...state,
      pending: state.pending.filter((note) => note.seq > to),
      summary: event.data.summary,
      summaryTo: Math.max(state.summaryTo, to),
      counts: { ...state.counts, compactions: state.counts.compactions + 1 },
    };
  }
  if (isEvent(event, "commentary.added") || isEvent(event, "commentary.skipped")) {
    return foldCommentary(state, event);
  }
  if (isEvent(event, "watch.failed")) {
    // A failed look counts as a look: the next waits its interval instead of hammering the model.
    const at = event.data.frame?.at;
    if (at === undefined) return state;
    if (event.data.call === "note") return { ...state, lastNoteAt: at };
    if (event.data.call === "commentary") return { ...state, lastCommentaryAt: at };
    return state;
  }
  if (isEvent(event, "watch.started")) {
    // A new stream starts afresh: its first frame is noted at once and commented on.
    const { lastNoteAt: _note, lastCommentaryAt: _commentary, ...rest } = state;
    return rest;
  }
  if (isEvent(event, "watch.settings-changed")) {
    return evict({ ...state, settings: event.data.settings as unknown as WatchSettings });
  }
  return state;
}

function foldCommentary(
  state: WatchState,
  event: SpoolEvent<EventData<"commentary.added"> | EventData<"commentary.skipped">>,
): WatchState {
  const spoke = event.type === "commentary.added";
  const gate = (event.data as { gate?: string }).gate;
  // A gate's skip is no decision of the model: the interval still runs from the last one.
  const decided = spoke || gate === "skip";
  const frame = event.data.frame;
  return {
    ...state,
    ...(decided && frame ? { lastCommentaryAt: frame.at } : {}),
    ...(frame && spoke ? { latestFrame: frame } : {}),
    counts: {
      ...state.counts,
      ...(spoke
        ? { commentaries: state.counts.commentaries + 1 }
        : { skips: state.counts.skips + 1 }),
    },
  };
}

function evict(state: WatchState): WatchState {
  const over = state.notes.length - state.settings.maxNoteEntries;
  if (over <= 0) return state;
  return {
    ...state,
    notes: state.notes.slice(over),
    pending: [...state.pending, ...state.notes.slice(0, over)],
  };
}

/**
 * The compaction to run now: every pending note, from the first's `seq` to the last's, once at
 * least `minNotes` are pending (default: half the window, at least one). `undefined` when too few
 * are pending. Pure.
 */
export function planCompaction(state: WatchState, minNotes?: number): CompactionPlan | undefined {
  const threshold = minNotes ?? Math.max(1, Math.ceil(state.settings.maxNoteEntries / 2));
  if (state.pending.length === 0 || state.pending.length < threshold) return undefined;
  return {
    fromSeq: state.pending[0]!.seq,
    toSeq: state.pending.at(-1)!.seq,
    notes: state.pending,
    ...(state.summary !== undefined ? { summary: state.summary } : {}),
  };
}

/** Folds `events` (in `seq` order) from `state` (the empty state by default). */
export function foldWatchEvents(
  events: Iterable<SpoolEvent>,
  state: WatchState = emptyWatchState(),
): WatchState {
  let current = state;
  for (const event of events) current = foldWatchEvent(current, event);
  return current;
}

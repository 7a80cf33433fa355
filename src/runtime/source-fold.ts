import type {
  SourceCursor,
  SourceDefinition,
  SourceState,
  SourcesState,
} from "../sources/index.js";
import { applySourceEvent, emptySourcesState } from "../sources/index.js";
import type { EventData, SpoolEvent } from "../spec/index.js";

/** The event types the fold of a session's sources reads. */
export const SOURCE_FOLD_TYPES = [
  "source.added",
  "source.removed",
  "source.started",
  "source.chunk",
  "source.rotated",
  "source.paused",
  "source.resumed",
  "source.exhausted",
  "source.failed",
  "turn.added",
  "run.started",
] as const;

/** What the fold keeps of a chunk not delivered yet: its numbers, never its lines. */
export interface PendingChunk {
  n: number;
  /** Where it is in the log (its lines are read from there for a digest). */
  seq: number;
  lines: number;
  bytes: number;
  skipped: number;
  matches: Record<string, number>;
  cursor: SourceCursor;
  at: string;
}

/** How a source's run ended for good, and whether a delivery has told the agent yet. */
export interface SourceEnd {
  type: "exhausted" | "failed";
  seq: number;
  announced: boolean;
  cursor?: SourceCursor;
  error?: { code: string; message: string };
}

/** One source's part of a delivery turn, as the log holds it when the turn was appended. */
export interface DeliveredSource {
  sourceId: string;
  definition: SourceDefinition | undefined;
  /** Absent when the turn only announces the source's end. */
  range?: { from: number; to: number; chunks: readonly PendingChunk[]; cursor: SourceCursor };
  /** The source's input ended and this turn says so. */
  exhausted?: { chunks: number; cursor: SourceCursor };
}

/** A delivery turn (`turn.added` with `sources`): what it delivered, at its logged time. */
export interface DeliveryRecord {
  turn: string;
  /** Its `ts`, in ms since the epoch: what hooks' rate limits measure. */
  at: number;
  sources: DeliveredSource[];
}

/** What one source has ready for the next delivery. */
export interface Deliverable {
  sourceId: string;
  state: SourceState;
  chunks: readonly PendingChunk[];
  /** An end not announced yet, told in the same turn. */
  end?: SourceEnd;
}

/**
 * The sources of one continuity as the runtime needs them, folded from the log in order: each
 * source's state (`applySourceEvent`), its chunks not delivered yet (their numbers and log
 * positions only), how its run ended, who added it, and the delivery turns no run has taken.
 *
 * A delivery turn is recorded exactly as the log stands at its position: the chunks it covers,
 * and every source whose end it announces (ended, not announced, nothing left to deliver), so its
 * hooks are the same whether a run takes it at once, after a restart, or in replay, whatever the
 * log holds after it by then.
 */
export class SourceFold {
  state: SourcesState = emptySourcesState();
  /** The last seq applied: events at or below it are skipped, so every event applies once. */
  seq = 0;
  readonly #pending = new Map<string, PendingChunk[]>();
  readonly #ends = new Map<string, SourceEnd>();
  readonly #addedBy = new Map<string, string>();
  readonly #deliveries = new Map<string, DeliveryRecord>();
  /** Turns appended that no run has started yet, by id, with their seq. */
  readonly #waiting = new Map<string, number>();

  /** Applies one event of the continuity (any type; those it does not read change nothing). */
  apply(event: SpoolEvent): void {
    if (event.seq <= this.seq) return;
    this.seq = event.seq;
    if (event.type === "turn.added") {
      const data = event.data as EventData<"turn.added">;
      this.#waiting.set(event.id, event.seq);
      if (data.sources !== undefined) this.#delivered(event, data.sources, data.ends);
      return;
    }
    if (event.type === "run.started") {
      // A run took the turn: its delivery is done with (the fold keeps only those still to run).
      const turn = (event.data as EventData<"run.started">).turn;
      if (turn !== undefined) {
        this.#deliveries.delete(turn);
        this.#waiting.delete(turn);
      }
      return;
    }
    if (!event.type.startsWith("source.")) return;
    this.state = applySourceEvent(this.state, event);
    const id = (event.data as { source_id: string }).source_id;
    this.#track(id, event);
  }

  /** The source `id` as the log has it, or `undefined`. */
  source(id: string): SourceState | undefined {
    return this.state.sources.get(id);
  }

  /** Who added `id` last (`manifest`, `action`, `runtime`, `cli`). */
  addedBy(id: string): string | undefined {
    return this.#addedBy.get(id);
  }

  /** The chunks of `id` not delivered yet, oldest first. */
  pending(id: string): readonly PendingChunk[] {
    return this.#pending.get(id) ?? [];
  }

  /** How `id`'s run ended for good, if it did (and nothing restarted it since). */
  end(id: string): SourceEnd | undefined {
    return this.#ends.get(id);
  }

  /**
   * What the next delivery would carry, by source id: every source not removed with chunks not
   * delivered, or whose end no delivery has announced yet.
   */
  deliverable(): Deliverable[] {
    const out: Deliverable[] = [];
    for (const [id, state] of this.state.sources) {
      if (state.status === "removed") continue;
      const chunks = this.pending(id);
      const end = this.#ends.get(id);
      const untold = end !== undefined && !end.announced ? end : undefined;
      if (chunks.length === 0 && untold === undefined) continue;
      out.push({ sourceId: id, state, chunks, ...(untold ? { end: untold } : {}) });
    }
    return out.sort((a, b) => (a.sourceId < b.sourceId ? -1 : a.sourceId > b.sourceId ? 1 : 0));
  }

  /** Turns appended after `seq` that no run has started yet, oldest first. */
  waitingAfter(seq: number): string[] {
    return [...this.#waiting]
      .filter(([, at]) => at > seq)
      .sort((a, b) => a[1] - b[1])
      .map(([turn]) => turn);
  }

  /** The delivery turn `turn`, if the fold has seen it and no run has taken it (`take`). */
  delivery(turn: string): DeliveryRecord | undefined {
    return this.#deliveries.get(turn);
  }

  /** Forgets the delivery turn `turn` (its run has taken it). */
  take(turn: string): void {
    this.#deliveries.delete(turn);
  }

  #track(id: string, event: SpoolEvent): void {
    switch (event.type) {
      case "source.added":
        this.#addedBy.set(id, (event.data as EventData<"source.added">).by);
        this.#ends.delete(id);
        return;
      case "source.removed":
        this.#pending.delete(id);
        this.#ends.delete(id);
        return;
      case "source.started":
      case "source.resumed":
        this.#ends.delete(id);
        return;
      case "source.chunk": {
        const data = event.data as EventData<"source.chunk">;
        const list = this.#pending.get(id) ?? [];
        list.push({
          n: data.n,
          seq: event.seq,
          lines: data.line_count,
          bytes: data.bytes,
          skipped: data.skipped ?? 0,
          matches: { ...(data.matches ?? {}) },
          cursor: data.cursor as SourceCursor,
          at: event.ts,
        });
        this.#pending.set(id, list);
        return;
      }
      case "source.exhausted": {
        const data = event.data as EventData<"source.exhausted">;
        this.#ends.set(id, {
          type: "exhausted",
          seq: event.seq,
          announced: false,
          cursor: data.cursor as SourceCursor,
        });
        return;
      }
      case "source.failed": {
        const data = event.data as EventData<"source.failed">;
        if (!data.final) return;
        this.#ends.set(id, {
          type: "failed",
          seq: event.seq,
          announced: false,
          error: { code: data.error.code, message: data.error.message },
          ...(data.cursor ? { cursor: data.cursor as SourceCursor } : {}),
        });
        return;
      }
    }
  }

  #delivered(
    event: SpoolEvent,
    entries: NonNullable<EventData<"turn.added">["sources"]>,
    told: EventData<"turn.added">["ends"],
  ): void {
    const record: DeliveryRecord = { turn: event.id, at: Date.parse(event.ts), sources: [] };
    for (const entry of entries) {
      const list = this.#pending.get(entry.source_id) ?? [];
      const chunks = list.filter(
        (chunk) => chunk.n >= entry.from_chunk && chunk.n <= entry.to_chunk,
      );
      this.#pending.set(
        entry.source_id,
        list.filter((chunk) => chunk.n > entry.to_chunk),
      );
      record.sources.push({
        sourceId: entry.source_id,
        definition: this.source(entry.source_id)?.definition,
        range: {
          from: entry.from_chunk,
          to: entry.to_chunk,
          chunks,
          cursor: entry.cursor as SourceCursor,
        },
      });
    }
    this.state = applySourceEvent(this.state, event);
    // The ends the turn records are those its text tells; a log from before they were recorded
    // tells every end with nothing left to deliver.
    const announces = told ? new Set(told.map((end) => end.source_id)) : undefined;
    for (const [id, end] of this.#ends) {
      if (end.announced || this.pending(id).length > 0) continue;
      if (announces && !announces.has(id)) continue;
      end.announced = true;
      if (end.type !== "exhausted") continue;
      const state = this.source(id);
      const exhausted = { chunks: state?.chunks ?? 0, cursor: end.cursor ?? {} };
      const known = record.sources.find((source) => source.sourceId === id);
      if (known) known.exhausted = exhausted;
      else record.sources.push({ sourceId: id, definition: state?.definition, exhausted });
    }
    this.#deliveries.set(event.id, record);
  }
}

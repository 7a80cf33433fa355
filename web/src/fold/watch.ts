import type { SpoolEvent } from "../../../src/spec/index.js";

/** The frame a stream-watch decision looked at. */
export interface WatchFrame {
  hash: string;
  width: number;
  height: number;
  /** Capture time, epoch milliseconds. */
  at: number;
  source: string;
}

/** One rolling note. */
export interface WatchNote {
  seq: number;
  ts: string;
  text: string;
  score: number;
  trigger?: string;
  by: string;
}

/** One commentary the loop spoke, or held back. */
export interface WatchCommentary {
  seq: number;
  ts: string;
  text?: string;
  trigger: string;
  /** Why it stayed silent (a gate, or the model's `[SKIP]`). */
  gate?: string;
}

/**
 * Folds stream-watch events into what the watch page shows: the latest frame looked at, the
 * rolling notes (a compaction removes the notes it folded into the running summary), the summary,
 * the commentary, the change scores over time (from `frame.scores-recorded`), the settings in force
 * and the last failure. Never throws.
 */
export class WatchFold {
  latestFrame: WatchFrame | undefined;
  notes: WatchNote[] = [];
  summary: { text: string; notes: number; toSeq: number } | undefined;
  readonly commentary: WatchCommentary[] = [];
  /** Change scores by capture time (epoch ms), with the scene cuts marked. */
  readonly scores: { at: number; score: number; cut: boolean }[] = [];
  settings: Record<string, unknown> | undefined;
  failure: { ts: string; call: string; message: string } | undefined;
  active = false;
  seen = false;

  push(event: SpoolEvent): void {
    const data = event.data as Record<string, unknown>;
    const frame = data.frame as WatchFrame | undefined;
    switch (event.type) {
      case "watch.started":
        this.active = true;
        this.seen = true;
        return;
      case "watch.stopped":
        this.active = false;
        return;
      case "watch.settings-changed":
        this.seen = true;
        this.settings = (data.settings ?? {}) as Record<string, unknown>;
        return;
      case "note.added":
        this.seen = true;
        if (frame) this.latest(frame);
        this.notes.push({
          seq: event.seq,
          ts: event.ts,
          text: String(data.text ?? ""),
          score: Number(data.score ?? 0),
          trigger: typeof data.trigger === "string" ? data.trigger : undefined,
          by: String(data.by ?? "note-taker"),
        });
        return;
      case "note.skipped":
        if (frame) this.latest(frame);
        return;
      case "notes.compacted": {
        const from = Number(data.from_seq);
        const to = Number(data.to_seq);
        this.notes = this.notes.filter((note) => note.seq < from || note.seq > to);
        this.summary = {
          text: String(data.summary ?? ""),
          notes: Number(data.notes ?? 0),
          toSeq: to,
        };
        return;
      }
      case "commentary.added":
      case "commentary.skipped":
        this.seen = true;
        if (frame) this.latest(frame);
        this.commentary.push({
          seq: event.seq,
          ts: event.ts,
          trigger: String(data.trigger ?? ""),
          ...(typeof data.text === "string" ? { text: data.text } : {}),
          ...(typeof data.gate === "string" ? { gate: data.gate } : {}),
        });
        return;
      case "frame.scores-recorded": {
        this.recordScores(data);
        return;
      }
      case "watch.failed": {
        const error = data.error as { message?: string } | undefined;
        this.failure = { ts: event.ts, call: String(data.call), message: error?.message ?? "" };
        return;
      }
    }
  }

  private latest(frame: WatchFrame): void {
    if (!this.latestFrame || frame.at >= this.latestFrame.at) this.latestFrame = frame;
  }

  private recordScores(data: Record<string, unknown>): void {
    this.seen = true;
    const from = Number(data.from ?? 0);
    const offsets = (data.offsets ?? []) as number[];
    const scores = (data.scores ?? []) as number[];
    const cuts = new Set((data.cuts ?? []) as number[]);
    scores.forEach((score, index) => {
      this.scores.push({ at: from + (offsets[index] ?? 0), score, cut: cuts.has(index) });
    });
  }
}

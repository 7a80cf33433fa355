import { ApiError, followEvents, readEvents, type SpoolEvent } from "../api.js";

/** Where a continuity's log stands in the dashboard. */
export type LogStatus = "loading" | "live" | "reconnecting" | "failed";

/** A read-only view of a `ContinuityLog` at one moment. */
export interface LogSnapshot {
  /** Every event read so far, by seq, without a gap or a duplicate. */
  readonly events: readonly SpoolEvent[];
  readonly status: LogStatus;
  /** The last problem reading or following the log (cleared once live again). */
  readonly error: ApiError | undefined;
}

const PAGE = 1000;

/**
 * A continuity's events in the browser: read page by page up to the head, then followed live
 * over SSE from that seq, the way a reader of the log resumes from an offset. An event is taken
 * only when its seq is above the last one taken, so a reconnect or a page that overlaps the live
 * stream never shows anything twice. Listeners are told after each change; `snapshot()` is a new
 * object after each change (for `useSyncExternalStore`). Never throws: problems land in `error`.
 */
export class ContinuityLog {
  private events: SpoolEvent[] = [];
  private status: LogStatus = "loading";
  private error: ApiError | undefined;
  private current: LogSnapshot = { events: [], status: "loading", error: undefined };
  private readonly listeners = new Set<() => void>();
  private stop: (() => void) | undefined;
  private closed = false;

  constructor(readonly continuity: string) {}

  /** Starts reading (once); safe to call again. */
  start(): void {
    if (this.stop !== undefined || this.closed) return;
    this.stop = () => {};
    void this.catchUp();
  }

  /** Stops following and forgets the listeners. */
  close(): void {
    this.closed = true;
    this.stop?.();
    this.listeners.clear();
  }

  /** The seq of the newest event taken (0 before any). */
  head(): number {
    return this.events.at(-1)?.seq ?? 0;
  }

  snapshot = (): LogSnapshot => this.current;

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  private async catchUp(): Promise<void> {
    try {
      for (;;) {
        const page = await readEvents(this.continuity, this.head(), PAGE);
        if (this.closed) return;
        this.take(page.events);
        if (page.next === null || page.events.length === 0) break;
      }
    } catch (error) {
      this.fail(error, "failed");
      return;
    }
    if (this.closed) return;
    this.stop = followEvents(this.continuity, this.head(), {
      event: (event) => this.take([event]),
      live: () => {
        this.status = "live";
        this.error = undefined;
        this.changed();
      },
      error: (error, fatal) => this.fail(error, fatal ? "failed" : "reconnecting"),
    });
  }

  private take(events: readonly SpoolEvent[]): void {
    let added = false;
    for (const event of events) {
      if (event.seq <= this.head()) continue;
      this.events.push(event);
      added = true;
    }
    if (added) this.changed();
  }

  private fail(error: unknown, status: LogStatus): void {
    this.status = status;
    this.error = error instanceof ApiError ? error : new ApiError(0, "error", String(error));
    this.changed();
  }

  private changed(): void {
    this.current = { events: this.events, status: this.status, error: this.error };
    for (const listener of this.listeners) listener();
  }
}

import type { Source, SourceContext, SourceDefinition } from "../sources/index.js";

/** Lines the hub keeps for its source at most; older ones are counted as dropped. */
export const PAGE_EVENT_BACKLOG = 1_000;
/** Characters one page-event line keeps at most. */
const LINE_MAX = 1_000;

/**
 * The page events of one browser relic (navigations, loads, console and page errors, failed
 * requests, dialogs, new tabs, downloads, refusals, the browser's own start and crash), as lines
 * for the `browser` source. It keeps at most `PAGE_EVENT_BACKLOG` lines while no one reads; a page
 * that floods it (an `alert()` loop, a console storm) costs bounded memory, and the next line
 * read says how many were dropped. `redact` is applied to every line (secrets typed so far).
 */
export class PageEventHub {
  #lines: string[] = [];
  #dropped = 0;
  #waiters: (() => void)[] = [];
  #redact: (text: string) => string = (text) => text;

  /** Sets the function every line passes through before it is kept. */
  setRedactor(redact: (text: string) => string): void {
    this.#redact = redact;
  }

  /** Adds one event line (cut to 1,000 characters). */
  push(line: string): void {
    const clean = this.#redact(line.replace(/\s+/g, " ").trim());
    if (this.#lines.length >= PAGE_EVENT_BACKLOG) {
      this.#lines.shift();
      this.#dropped += 1;
    }
    this.#lines.push(clean.length > LINE_MAX ? `${clean.slice(0, LINE_MAX - 1)}…` : clean);
    for (const wake of this.#waiters.splice(0)) wake();
  }

  /** Takes up to `max` lines (and a line for the ones dropped since the last take). */
  take(max: number): string[] {
    const lines = this.#lines.splice(0, max);
    if (this.#dropped > 0) {
      lines.unshift(
        `(${this.#dropped} page events dropped: the page produced them faster than they were read)`,
      );
      this.#dropped = 0;
    }
    return lines;
  }

  /** Resolves once a line is waiting, or `signal` aborts. */
  wait(signal: AbortSignal): Promise<void> {
    if (this.#lines.length > 0 || this.#dropped > 0 || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        signal.removeEventListener("abort", done);
        resolve();
      };
      this.#waiters.push(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
}

/**
 * The `browser` source: the page events of `hub` as lines in chunks, for as long as it runs (it
 * reads nothing while the browser is down, and picks up again when it starts). Its cursor counts
 * the lines handed over; page events are live data, so a restart does not replay old ones. Never
 * throws; returns when the signal aborts or the runner stops taking emissions.
 */
export function createPageEventSource(definition: SourceDefinition, hub: PageEventHub): Source {
  return {
    definition,
    async run(context: SourceContext): Promise<void> {
      const start = context.cursor?.lines;
      let count = typeof start === "number" ? start : 0;
      while (!context.signal.aborted) {
        await hub.wait(context.signal);
        if (context.signal.aborted) return;
        const lines = hub.take(definition.batching.maxLines);
        if (lines.length === 0) continue;
        count += lines.length;
        const bytes = lines.reduce((sum, line) => sum + Buffer.byteLength(line) + 1, 0);
        try {
          await context.emit({ type: "chunk", lines, bytes, cursor: { lines: count } });
        } catch {
          return;
        }
      }
    },
  };
}

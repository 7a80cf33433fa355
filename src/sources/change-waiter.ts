import { type FSWatcher, watch } from "node:fs";

/**
 * Waits for a file to change: an `fs.watch` event on its directory naming it (or naming nothing;
 * any name at all when the waiter watches the whole directory, `name` undefined),
 * a poll interval passing, or the signal aborting, whichever comes first. An event that arrives
 * while nobody waits is remembered, so the next `wait` returns at once: no change is missed
 * between reading and waiting. Where watching fails (no such directory, no inotify left) polling
 * alone goes on. Never throws.
 */
export class ChangeWaiter {
  readonly #directory: string;
  readonly #name: string | undefined;
  readonly #signal: AbortSignal;
  #watcher: FSWatcher | undefined;
  #changed = false;
  #wake: (() => void) | undefined;

  constructor(directory: string, name: string | undefined, signal: AbortSignal) {
    this.#directory = directory;
    this.#name = name;
    this.#signal = signal;
  }

  /** Starts watching the directory (if it exists); call again to retry after it failed. */
  watch(): void {
    if (this.#watcher !== undefined) return;
    try {
      const watcher = watch(this.#directory, { persistent: false }, (_event, filename) => {
        if (filename === null || this.#name === undefined || filename === this.#name) {
          this.#notify();
        }
      });
      watcher.on("error", () => {
        watcher.close();
        if (this.#watcher === watcher) this.#watcher = undefined;
      });
      this.#watcher = watcher;
    } catch {
      this.#watcher = undefined;
    }
  }

  /** Resolves after a change, after `ms`, or when the signal aborts. */
  wait(ms: number): Promise<void> {
    if (this.#changed || this.#signal.aborted) {
      this.#changed = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.#signal.removeEventListener("abort", done);
        this.#wake = undefined;
        this.#changed = false;
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, ms));
      this.#signal.addEventListener("abort", done, { once: true });
      this.#wake = done;
    });
  }

  /** Stops watching and wakes a pending wait. */
  close(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
    this.#wake?.();
  }

  #notify(): void {
    this.#changed = true;
    this.#wake?.();
  }
}

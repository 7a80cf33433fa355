import { type FSWatcher, watch } from "node:fs";
import { basename, dirname } from "node:path";

/**
 * Notices commits that other processes make to a SQLite database, so subscribers in this process
 * hear of them within a millisecond or so instead of a polling interval.
 *
 * A commit writes the `-wal` file; an inotify watch on the directory reports it and `check`
 * runs (it compares `PRAGMA data_version`, so this process's own commits and unrelated writes cost
 * one cheap query). A slow poll runs beside it, for file systems where watching is not reported
 * (network mounts) and as a safety net. While started, the watch keeps the process alive, as a
 * socket would: a live subscription is work in progress.
 */
export class ForeignCommitWatch {
  readonly #file: string;
  readonly #check: () => void;
  readonly #pollIntervalMs: number;
  #watcher: FSWatcher | undefined;
  #poll: NodeJS.Timeout | undefined;

  constructor(file: string, check: () => void, pollIntervalMs: number) {
    this.#file = file;
    this.#check = check;
    this.#pollIntervalMs = pollIntervalMs;
  }

  get running(): boolean {
    return this.#poll !== undefined;
  }

  start(): void {
    if (this.#poll) return;
    const names = new Set([basename(this.#file), `${basename(this.#file)}-wal`]);
    try {
      this.#watcher = watch(dirname(this.#file), (_event, name) => {
        if (name === null || names.has(name.toString())) this.#check();
      });
      // A watcher that fails later (the directory removed) leaves the poll to carry on.
      this.#watcher.on("error", () => this.#stopWatcher());
    } catch {
      this.#watcher = undefined; // no inotify here (limits, odd file system): polling only
    }
    this.#poll = setInterval(() => this.#check(), this.#pollIntervalMs);
    if (this.#watcher) this.#poll.unref();
  }

  stop(): void {
    this.#stopWatcher();
    if (this.#poll) clearInterval(this.#poll);
    this.#poll = undefined;
  }

  /** Ends the file watch; the poll, if running, then holds the process open instead. */
  #stopWatcher(): void {
    this.#watcher?.close();
    this.#watcher = undefined;
    this.#poll?.ref();
  }
}

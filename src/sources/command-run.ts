import { type ChildProcess, spawn } from "node:child_process";
import type { Readable } from "node:stream";

/** One output channel of a command. */
export type CommandChannel = "stdout" | "stderr";

/** What a running command did next. */
export type CommandEvent =
  | { type: "data"; channel: CommandChannel; bytes: Buffer }
  | { type: "end"; channel: CommandChannel }
  | { type: "exit"; code: number | null; signal: NodeJS.Signals | null }
  | { type: "spawn-failed"; error: Error };

/** How to start a command. */
export interface CommandSpawn {
  command: string;
  shell: string;
  cwd: string;
  env: Record<string, string | undefined>;
}

/**
 * One run of a command: `shell -c command` in its own process group, its stdout and stderr read
 * one buffer at a time. A stream is paused from the moment it hands a buffer over until the
 * reader calls `resume` for it, so a reader that is slow (awaiting its runner) holds the command
 * back through its pipe: memory stays at one buffer per stream, whatever the command writes.
 * Events come out in order through `next`; `exit` comes last, after both streams ended.
 */
export class CommandRun {
  readonly #child: ChildProcess;
  readonly #queue: CommandEvent[] = [];
  #waiting: ((event: CommandEvent | undefined) => void) | undefined;
  #exited = false;
  #exit: Promise<void>;

  constructor(spawnOptions: CommandSpawn) {
    this.#child = spawn(spawnOptions.shell, ["-c", spawnOptions.command], {
      cwd: spawnOptions.cwd,
      env: spawnOptions.env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.#exit = new Promise((resolve) => {
      this.#child.once("exit", () => {
        this.#exited = true;
        resolve();
      });
    });
    this.#child.once("error", (error) => {
      if (this.#child.pid === undefined) this.#push({ type: "spawn-failed", error });
    });
    this.#child.once("close", (code, signal) => {
      if (this.#child.pid !== undefined) this.#push({ type: "exit", code, signal });
    });
    this.#listen(this.#child.stdout!, "stdout");
    this.#listen(this.#child.stderr!, "stderr");
  }

  /** The next event, or `undefined` when `ms` passed or `signal` aborted first. */
  next(ms: number | undefined, signal: AbortSignal): Promise<CommandEvent | undefined> {
    const queued = this.#queue.shift();
    if (queued !== undefined) return Promise.resolve(queued);
    if (signal.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      const done = (event: CommandEvent | undefined): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        this.#waiting = undefined;
        resolve(event);
      };
      const onAbort = (): void => done(undefined);
      const timer = ms === undefined ? undefined : setTimeout(() => done(undefined), ms);
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting = done;
    });
  }

  /** Lets `channel` hand over its next buffer. */
  resume(channel: CommandChannel): void {
    this.#stream(channel).resume();
  }

  /**
   * Ends the run: drops unread output, sends SIGTERM to the whole process group, SIGKILL after
   * `graceMs` if the command has not exited, then SIGKILL to whatever is left of the group (a
   * child that ignored SIGTERM): no process of the run outlives it. Resolves once it exited.
   */
  async kill(graceMs: number): Promise<void> {
    this.#child.stdout?.destroy();
    this.#child.stderr?.destroy();
    if (this.#child.pid === undefined) return;
    if (!this.#exited) {
      this.#signalGroup("SIGTERM");
      let timer: ReturnType<typeof setTimeout> | undefined;
      const grace = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, graceMs);
      });
      await Promise.race([this.#exit, grace]);
      clearTimeout(timer);
      if (!this.#exited) this.#signalGroup("SIGKILL");
      await this.#exit;
    }
    this.#signalGroup("SIGKILL");
  }

  /**
   * Sends SIGTERM to what is left of the run's process group after it ended (usually nothing: a
   * background child that closed its output), so restarts never pile up processes.
   */
  reapGroup(): void {
    this.#signalGroup("SIGTERM");
  }

  #signalGroup(signal: NodeJS.Signals): void {
    const pid = this.#child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, signal);
    } catch {
      // ESRCH: the group is gone already.
    }
  }

  #stream(channel: CommandChannel): Readable {
    return (channel === "stdout" ? this.#child.stdout : this.#child.stderr)!;
  }

  #listen(stream: Readable, channel: CommandChannel): void {
    stream.on("data", (bytes: Buffer) => {
      stream.pause();
      this.#push({ type: "data", channel, bytes });
    });
    stream.once("end", () => this.#push({ type: "end", channel }));
    stream.on("error", () => undefined);
  }

  #push(event: CommandEvent): void {
    if (this.#waiting !== undefined) this.#waiting(event);
    else this.#queue.push(event);
  }
}

import { createInterface, type Key } from "node:readline";
import { Writable } from "node:stream";
import type { CliOutput } from "../format.js";

/** Where `SIGINT` comes from besides the keyboard: pass `process` in the CLI. */
export interface SignalSource {
  on(event: "SIGINT", listener: () => void): unknown;
  off(event: "SIGINT", listener: () => void): unknown;
}

/** Options of `createChatInput`. */
export interface ChatInputOptions {
  /** The user's side: a terminal (line editing, history, Ctrl-C/Ctrl-D keys) or a pipe. */
  input: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Where the prompt and the line being edited are drawn (the renderer's output). */
  output: CliOutput & {
    on?(event: "resize", listener: () => void): unknown;
    off?(event: "resize", listener: () => void): unknown;
  };
  /** Shown before each line on a terminal (`you › `); never written to a pipe. */
  prompt: string;
  /**
   * Signals to treat like Ctrl-C (a `kill -INT`, or Ctrl-C when input is a pipe and the terminal
   * sends the signal): while busy they interrupt, while idle they end the input. None by default.
   */
  signals?: SignalSource;
  /** Lines kept for the up/down keys, in memory; 1000 by default. */
  historySize?: number;
}

/** The user's turns, read one at a time. */
export interface ChatInput {
  /**
   * The next turn: shows the prompt and resolves with the line entered (a bracketed paste of
   * several lines, followed by Enter, is one turn), or `undefined` once the input has ended
   * (Ctrl-D on an empty line, a second Ctrl-C at an empty prompt, end of a pipe, `close()`).
   * A line entered while busy is kept and returned by the next call. Calling it marks the
   * input idle; calling it again before it resolves returns the same promise.
   */
  next(): Promise<string | undefined>;
  /**
   * Adds a handler for Ctrl-C while busy (cancel the running step); returns its removal.
   * Handlers must not throw: one that throws is ignored.
   */
  onInterrupt(handler: () => void): () => void;
  /**
   * Marks a run as active (`true`) or over. While busy, Ctrl-C calls the interrupt handlers
   * instead of editing the prompt, and keys typed are not echoed over the run's output.
   */
  setBusy(busy: boolean): void;
  /** True when reading a terminal (prompt, line editing, history). */
  readonly interactive: boolean;
  /**
   * Where the rest of the chat writes (the renderer, a follower's view): `output` itself, except
   * while the prompt waits for a line. Then what is written goes above the prompt: the prompt is
   * cleared first and drawn again below it, with the line being edited and its cursor, once the
   * output ends a line. While the output ends mid-line (text still streaming) the prompt stays
   * hidden: keys typed are kept, not echoed, and shown when it is drawn again; a line entered
   * then is shown once, on a line of its own.
   */
  readonly output: CliOutput;
  /** Restores the terminal and ends the input; pending `next()` resolves `undefined`. */
  close(): void;
}

const EXIT_HINT = "(To exit, press Ctrl-C again or Ctrl-D)";
const PASTE_ON = "\x1b[?2004h";
const PASTE_OFF = "\x1b[?2004l";
// biome-ignore lint/suspicious/noControlCharactersInRegex: it matches terminal control sequences
const CONTROL = /\x1b\[[0-9;?]*[A-Za-z~]/g;

/**
 * Where the cursor is after `chunk`: at a line start (`true`), mid-line (`false`), or where it
 * was (`undefined`: escape sequences only, which the chat never uses to move across columns).
 */
function endsAtLineStart(chunk: string): boolean | undefined {
  const end = Math.max(chunk.lastIndexOf("\n"), chunk.lastIndexOf("\r"));
  const tail = chunk.slice(end + 1).replace(CONTROL, "");
  if (tail !== "") return false;
  return end >= 0 ? true : undefined;
}

/**
 * Reads turns with `node:readline`. On a terminal (input and output both TTYs): line editing,
 * in-memory history and bracketed paste. Ctrl-C while idle clears a non-empty line; at an empty
 * prompt it shows a hint, and a second Ctrl-C there ends the input like Ctrl-D. Ctrl-C while
 * busy calls the interrupt handlers. From a pipe: no raw mode, no prompt, each line is a turn,
 * end of input ends.
 *
 * Contract: of its own it writes to `output` only the prompt, the line being edited, the exit hint
 * and a final newline; never while busy. Everything else the chat shows goes through its
 * `output`, which keeps the prompt below it (see `ChatInput.output`). It never throws from a key
 * or signal.
 */
export function createChatInput(options: ChatInputOptions): ChatInput {
  const { input, output, prompt } = options;
  const interactive = input.isTTY === true && output.isTTY === true;
  let busy = false;
  let ended = false;
  let closing = false;
  let armed = false;
  let pasting = false;
  let pasted: string[] = [];
  const queue: { text: string; unseen: boolean }[] = [];
  const handlers = new Set<() => void>();
  let waiter: { promise: Promise<string | undefined>; resolve(text?: string): void } | undefined;
  /** The prompt and the line being edited are on the screen, the cursor among them. */
  let drawn = false;
  /** A prompt waits for a line but is not shown: what was written above it ends mid-line. */
  let hidden = false;
  /** Whether everything written so far leaves the cursor at a line start. */
  let lineStart = true;

  const emit = (text: string) => {
    if (text === "") return;
    output.write(text);
    lineStart = endsAtLineStart(text) ?? lineStart;
  };
  const screen = new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      if (!busy && !hidden) emit(chunk.toString());
      done();
    },
  });
  Object.defineProperty(screen, "columns", { get: () => output.columns });
  const onResize = () => screen.emit("resize");
  if (interactive) output.on?.("resize", onResize);

  const rl = createInterface({
    input,
    output: interactive ? screen : undefined,
    prompt,
    terminal: interactive,
    historySize: options.historySize ?? 1000,
    removeHistoryDuplicates: true,
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  if (interactive) output.write(PASTE_ON);

  /** Moves the cursor to the start of the prompt and clears it and everything below. */
  const erasePrompt = () => {
    if (!drawn) return "";
    drawn = false;
    const { rows } = rl.getCursorPos();
    return `${rows > 0 ? `\x1b[${rows}A` : ""}\r\x1b[J`;
  };
  /** Draws the prompt and the line being edited at the cursor, which is at a line start. */
  const drawPrompt = () => {
    hidden = false;
    drawn = true;
    // readline redraws from the row it left its cursor on, that many rows below the prompt's
    // first: go down as many first, so that it comes back up to here.
    const { rows } = rl.getCursorPos();
    if (rows > 0) emit("\n".repeat(rows));
    rl.prompt(true);
  };
  const prompting = () => interactive && waiter !== undefined && !busy && !ended;
  const print = (chunk: string) => {
    if (chunk === "") return;
    if (!prompting()) return emit(chunk);
    emit(erasePrompt() + chunk);
    if (lineStart) drawPrompt();
    else hidden = true;
  };

  const settle = (text?: string) => {
    const current = waiter;
    waiter = undefined;
    current?.resolve(text);
  };
  const interrupt = () => {
    for (const handler of [...handlers]) {
      try {
        handler();
      } catch {
        // The contract says handlers do not throw; one that does must not kill the prompt.
      }
    }
  };
  const finish = () => {
    if (ended) return;
    ended = true;
    rl.close();
  };

  rl.on("line", (line: string) => {
    if (pasting) {
      pasted.push(line);
      return;
    }
    const lines = [...pasted, line];
    pasted = [];
    while (lines.length > 1 && lines.at(-1) === "") lines.pop();
    const text = lines.join("\n");
    armed = false;
    drawn = false;
    // Entered while output above the prompt ended mid-line: nothing of it was shown yet.
    if (hidden) emit(`\n${prompt}${text}\n`);
    hidden = false;
    if (waiter && queue.length === 0) settle(text);
    else queue.push({ text, unseen: interactive && busy });
  });
  rl.on("close", () => {
    ended = true;
    if (interactive && !busy && !closing) emit(lineStart ? "" : "\n");
    drawn = false;
    hidden = false;
    if (queue.length === 0) settle(undefined);
  });
  rl.on("SIGINT", () => {
    if (busy) {
      armed = false;
      interrupt();
    } else if (rl.line !== "") {
      armed = false;
      rl.write(null, { ctrl: true, name: "e" });
      rl.write(null, { ctrl: true, name: "u" });
    } else if (armed) {
      finish();
    } else {
      armed = true;
      drawn = false;
      emit(`${lineStart ? "" : "\n"}${EXIT_HINT}\n`);
      drawPrompt();
    }
  });
  const onKeypress = (_text: string | undefined, key: Key | undefined) => {
    if (key?.name === "paste-start") pasting = true;
    else if (key?.name === "paste-end") pasting = false;
    else if (!(key?.ctrl && key.name === "c")) armed = false;
  };
  if (interactive) input.on("keypress", onKeypress);
  const onSignal = () => {
    if (busy) interrupt();
    else finish();
  };
  options.signals?.on("SIGINT", onSignal);

  return {
    interactive,
    output: {
      write: print,
      get isTTY() {
        return output.isTTY;
      },
      get columns() {
        return output.columns;
      },
    },
    next() {
      busy = false;
      const queued = queue.shift();
      if (queued) {
        if (queued.unseen) emit(`${lineStart ? "" : "\n"}${prompt}${queued.text}\n`);
        return Promise.resolve(queued.text);
      }
      if (ended) return Promise.resolve(undefined);
      if (waiter) return waiter.promise;
      let resolve!: (text?: string) => void;
      const promise = new Promise<string | undefined>((done) => {
        resolve = done;
      });
      waiter = { promise, resolve };
      if (interactive) {
        if (lineStart) drawPrompt();
        else hidden = true;
      }
      return promise;
    },
    onInterrupt(handler) {
      handlers.add(handler);
      return () => {
        handlers.delete(handler);
      };
    },
    setBusy(value) {
      if (value) {
        emit(erasePrompt());
        hidden = false;
        armed = false;
      }
      busy = value;
    },
    close() {
      if (closing) return;
      closing = true;
      options.signals?.off("SIGINT", onSignal);
      input.off("keypress", onKeypress);
      if (interactive) {
        output.write(PASTE_OFF);
        output.off?.("resize", onResize);
      }
      finish();
      queue.length = 0;
      settle(undefined);
    },
  };
}

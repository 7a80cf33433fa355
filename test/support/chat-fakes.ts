import type { StepOutputEvent } from "../../src/actions/index.js";
import type { ClockTimers } from "../../src/cli/chat/index.js";
import type { RunNotice, RunTotals } from "../../src/runtime/run-notice.js";

/** The output sink of a renderer under test: it keeps every write, in order. */
export interface CollectedOutput {
  isTTY: boolean;
  columns: number;
  chunks: string[];
  write(chunk: string): boolean;
  readonly text: string;
}

/** A sink that looks like a terminal `columns` wide (`tty`) or like a pipe. */
export function collectOutput(tty: boolean, columns = 80): CollectedOutput {
  const chunks: string[] = [];
  return {
    isTTY: tty,
    columns,
    chunks,
    write(chunk) {
      chunks.push(chunk);
      return true;
    },
    get text() {
      return chunks.join("");
    },
  };
}

/** Interval timers stepped by hand: `tick()` runs every active callback once. */
export interface ManualTimers extends ClockTimers {
  readonly active: number;
  tick(): void;
}

/** Timers that never fire on their own: the test calls `tick()`; `active` counts live ones. */
export function manualTimers(): ManualTimers {
  const callbacks = new Map<number, () => void>();
  let next = 0;
  return {
    setInterval(callback) {
      next += 1;
      callbacks.set(next, callback);
      return next;
    },
    clearInterval(handle) {
      callbacks.delete(handle as number);
    },
    get active() {
      return callbacks.size;
    },
    tick() {
      for (const callback of [...callbacks.values()]) callback();
    },
  };
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: it matches escape sequences
const SGR = /\x1b\[[0-9;]*m/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: it matches escape sequences
const CURSOR = /\x1b\[[0-9]*[ABCDGJK]|\r/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: it matches escape sequences
const SEQUENCE = /^\x1b\[([0-9;?]*)([A-Za-z~])/;

/** Text without colour codes. */
export function stripColor(text: string): string {
  return text.replace(SGR, "");
}

/** Text without cursor movement and line clearing (colour codes are kept). */
export function stripCursor(text: string): string {
  return text.replace(CURSOR, "");
}

/**
 * What a terminal shows after receiving `written`: a tiny emulator of the sequences the chat and
 * `node:readline` use (`\r`, `\n` as CR LF, cursor up/down/right/left, to a column, erase in
 * line and below; colours and modes ignored). Lines wrap at `columns` (unlimited by default). Rows
 * never scroll away, so every line ever shown that was not erased is in the result.
 */
export function screenOf(written: string, columns = Number.POSITIVE_INFINITY): string[] {
  const rows: string[][] = [[]];
  let row = 0;
  let col = 0;
  const at = (index: number) => {
    while (rows.length <= index) rows.push([]);
    return rows[index]!;
  };
  const lastColumn = Number.isFinite(columns) ? columns - 1 : Number.POSITIVE_INFINITY;
  let index = 0;
  while (index < written.length) {
    const char = written[index]!;
    if (char === "\x1b") {
      const match = SEQUENCE.exec(written.slice(index));
      if (!match)
        throw new Error(
          `unknown escape at ${index}: ${JSON.stringify(written.slice(index, index + 8))}`,
        );
      const [whole, arg, command] = match;
      const n = arg === "" ? 1 : Number(arg);
      const mode = arg === "" ? 0 : Number(arg);
      if (command === "A") row = Math.max(0, row - n);
      else if (command === "B") row += n;
      else if (command === "C") col = Math.min(lastColumn, col + n);
      else if (command === "D") col = Math.max(0, col - n);
      else if (command === "G") col = Math.min(lastColumn, n - 1);
      else if (command === "K") {
        const line = at(row);
        if (mode === 0) line.length = Math.min(line.length, col);
        else if (mode === 1) line.fill(" ", 0, Math.min(line.length, col + 1));
        else line.length = 0;
      } else if (command === "J") {
        if (mode === 0) {
          at(row).length = Math.min(at(row).length, col);
          rows.length = row + 1;
        } else {
          for (const line of rows) line.length = 0;
        }
      } else if (command !== "m" && command !== "h" && command !== "l") {
        throw new Error(`unexpected sequence ${JSON.stringify(whole)}`);
      }
      index += whole!.length;
      continue;
    }
    if (char === "\n") {
      row += 1;
      col = 0;
      at(row);
    } else if (char === "\r") {
      col = 0;
    } else {
      if (col > lastColumn) {
        row += 1;
        col = 0;
      }
      const line = at(row);
      while (line.length < col) line.push(" ");
      line[col] = char;
      col += 1;
    }
    index += 1;
  }
  const lines = rows.map((cells) => cells.join("").trimEnd());
  while (lines.length > 0 && lines.at(-1) === "") lines.pop();
  return lines;
}

const at = { offset: 0, line: 1, column: 1 };

/** The `output` notice of one step event. */
export function output(step: string, event: StepOutputEvent): RunNotice {
  return { type: "output", step, event };
}

/** A whole block streamed as `chunks` (one delta each): start, deltas, end. */
export function block(
  step: string,
  id: number,
  kind: "thought" | "response" | "text",
  chunks: readonly string[],
): RunNotice[] {
  const start: StepOutputEvent =
    kind === "response"
      ? { type: "block-start", kind, block: id, final: true, at }
      : { type: "block-start", kind, block: id, at };
  return [
    output(step, start),
    ...chunks.map((text) => output(step, { type: "block-delta", kind, block: id, text })),
    output(step, { type: "block-end", kind, block: id, closed: true, at }),
  ];
}

/** `action.dispatched` of a tool run in `async` mode. */
export function dispatched(
  step: string,
  id: string,
  name: string,
  parameters: Record<string, unknown> = {},
): RunNotice {
  return output(step, {
    type: "action-event",
    entry: {
      type: "action.dispatched",
      data: {
        action_id: id,
        type: "tool",
        mode: "async",
        name,
        parameters,
        depends_on: [],
        retry: 0,
        on_error: "fail",
        in_thought: false,
      },
    },
  });
}

/** `action.succeeded` after `ms`. */
export function succeeded(step: string, id: string, ms: number): RunNotice {
  return output(step, {
    type: "action-event",
    entry: {
      type: "action.succeeded",
      data: { action_id: id, attempt: 1, output: "ok", duration_ms: ms },
    },
  });
}

/** `action.failed` after `ms` with `message`. */
export function failed(step: string, id: string, ms: number, message: string): RunNotice {
  return output(step, {
    type: "action-event",
    entry: {
      type: "action.failed",
      data: { action_id: id, attempt: 1, error: { code: "tool.failed", message }, duration_ms: ms },
    },
  });
}

/** Totals of a run. */
export function totals(partial: Partial<RunTotals> = {}): RunTotals {
  return { steps: 1, inputTokens: 0, outputTokens: 0, costUsd: 0, actions: 0, ...partial };
}

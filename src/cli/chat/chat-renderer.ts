import type { ActionLogEntry, StepOutputEvent } from "../../actions/index.js";
import type { ActionRequest } from "../../protocol/index.js";
import type { RunLimitName, RunNotice, RunObserver } from "../../runtime/index.js";
import { type CliOutput, colorEnabled, createStyle, oneLine, outputWidth } from "../format.js";
import {
  type ActionEnd,
  type ActionView,
  endedLine,
  formatDuration,
  runningLine,
  stepLine,
  totalsLine,
} from "./action-lines.js";
import { actionUpdate } from "./action-update.js";
import { deliveryLine } from "./delivery-line.js";
import { createLiveTerminal } from "./live-terminal.js";
import { createMarkdownStream } from "./markdown-stream.js";
import { fitWidth, sanitizeText } from "./terminal-text.js";
import { createThoughtStream } from "./thought-stream.js";

/** The interval timer the spinner runs on; inject a fake one to step it in tests. */
export interface ClockTimers {
  setInterval(callback: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

/** Options of `createChatRenderer`. */
export interface ChatRendererOptions {
  /** Where the chat is drawn; live redrawing and colour apply only when it is a terminal. */
  output: CliOutput;
  /** `NO_COLOR`, `TERM` and `COLUMNS` are read from it. */
  env: Record<string, string | undefined>;
  /** Milliseconds for the elapsed time of running actions; `Date.now` by default. */
  now?: () => number;
  /** Frames of the spinner of running actions; braille dots by default. */
  spinnerFrames?: readonly string[];
  /** Timer of the spinner; the global (unref'd) `setInterval` by default. */
  clockTimers?: ClockTimers;
}

/** The terminal view of `spool chat`. */
export interface ChatRenderer {
  /** Give it to the runtime: renders each run notice as it happens. Never throws. */
  observe: RunObserver;
  /** Shows what the user said (`❯ text`): for turns that the terminal did not echo (a pipe). */
  userEcho(text: string): void;
  /** A dim line of information from the chat itself. */
  info(line: string): void;
  /** A red line for an error of the chat itself. */
  error(line: string): void;
  /** Ends open text, removes the live region and stops the spinner; later calls do nothing. */
  close(): void;
}

const DEFAULT_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const SPINNER_MS = 80;
const MAX_LIVE_LINES = 8;

const defaultTimers: ClockTimers = {
  setInterval(callback, ms) {
    const handle = setInterval(callback, ms);
    handle.unref();
    return handle;
  },
  clearInterval(handle) {
    clearInterval(handle as ReturnType<typeof setInterval>);
  },
};

interface Running extends ActionView {
  startedAt: number;
  /** Still running when its run ended (fire-and-forget): no longer in the live region. */
  detached: boolean;
}

/**
 * The renderer of `spool chat`: a pure function of the run notices it is given to what the
 * terminal shows. Thoughts stream dimmed under `· thinking`; responses stream as rendered
 * markdown; each action shows live (`⠋ tool fs.read {…}`, then `✓ fs.read 12 ms` or `✗ … —
 * error`); steps end with a dim usage line; retries, limits, queued turns and handoffs are one
 * line each; a run that did not complete says how it ended.
 *
 * On a terminal, actions in flight stay in a live region at the bottom, animated by one interval
 * timer that runs only while the region is shown; elsewhere each action prints one line when it
 * starts and one when it ends, and the output holds no escape sequence at all. Colour follows
 * `colorEnabled` (`NO_COLOR`, `TERM=dumb`); action lines are fitted to `outputWidth`.
 *
 * Contract: `observe` never throws. A fault of the renderer itself is swallowed after one plain
 * error line; it writes only to `output`.
 */
export function createChatRenderer(options: ChatRendererOptions): ChatRenderer {
  const { output, env } = options;
  const now = options.now ?? Date.now;
  const frames = options.spinnerFrames?.length ? options.spinnerFrames : DEFAULT_FRAMES;
  const timers = options.clockTimers ?? defaultTimers;
  const live = output.isTTY === true;
  const style = createStyle(colorEnabled(output, env));
  const width = () => Math.max(20, outputWidth(output, env) - 1);
  const term = createLiveTerminal(output, live);

  let block: { step: string; id: number; push(text: string): void; end(): void } | undefined;
  const requests = new Map<string, ActionRequest>();
  const running = new Map<string, Running>();
  let waiting: { step: string; model: string } | undefined;
  let frame = 0;
  let timer: unknown;
  let pressure: number | undefined;
  let closed = false;
  let faulted = false;

  const keyOf = (step: string, id: string) => `${step}\u0000${id}`;

  const liveLines = (): string[] => {
    const marker = frames[frame % frames.length]!;
    const shown = [...running.values()].filter((action) => !action.detached);
    const lines = shown
      .slice(0, MAX_LIVE_LINES)
      .map((action) => runningLine(marker, action, style, width(), now() - action.startedAt));
    if (shown.length > MAX_LIVE_LINES) {
      lines.push(style.dim(`  … and ${shown.length - MAX_LIVE_LINES} more`));
    }
    if (waiting && lines.length === 0) {
      lines.push(`${style.cyan(marker)} ${style.dim(oneLine(`waiting for ${waiting.model}`))}`);
    }
    return lines;
  };

  /** Redraws the live region (printing `printed` above it first) and runs the spinner while it shows. */
  const refresh = (printed: readonly string[] = []) => {
    const lines = live && !closed ? liveLines() : [];
    if (printed.length > 0) term.lines(printed, lines);
    else term.setLive(lines);
    if (lines.length > 0 && timer === undefined) {
      timer = timers.setInterval(() => guard(tick), SPINNER_MS);
    } else if (lines.length === 0 && timer !== undefined) {
      timers.clearInterval(timer);
      timer = undefined;
    }
  };
  const tick = () => {
    frame += 1;
    refresh();
  };

  const print = (...lines: string[]) => term.lines(lines);
  const endBlock = () => {
    block?.end();
    block = undefined;
  };
  const stopWaiting = () => {
    if (waiting === undefined) return;
    waiting = undefined;
    refresh();
  };

  const openBlock = (step: string, id: number, kind: string, feedId?: string) => {
    endBlock();
    term.startLine();
    const write = (text: string) => term.text(text);
    const width = outputWidth(output, env);
    const stream =
      kind === "thought" || kind === "feed"
        ? createThoughtStream({
            style,
            write,
            marker: kind === "thought" ? "· thinking" : `· feed ${oneLine(feedId ?? "")}`,
          })
        : createMarkdownStream({ style, write, width });
    block = { step, id, push: stream.push, end: stream.end };
  };

  const startAction = (key: string, view: ActionView) => {
    if (running.has(key)) return;
    const action: Running = { ...view, startedAt: now(), detached: false };
    running.set(key, action);
    if (live) refresh();
    else print(runningLine("→", action, style, width()));
  };

  const endAction = (key: string, id: string, end: ActionEnd) => {
    const name = running.get(key)?.name ?? requests.get(key)?.name ?? id;
    running.delete(key);
    refresh([endedLine(name, end, style, width())]);
  };

  const noteAction = (key: string, note: string) => {
    const action = running.get(key);
    if (!action) return;
    action.note = note;
    if (live && !action.detached) refresh();
    else print(style.dim(`  ↻ ${oneLine(action.name)} ${note}`));
  };

  const actionEvent = (step: string, entry: ActionLogEntry) => {
    const found = actionUpdate(entry);
    if (!found) return;
    const { id, update } = found;
    const key = keyOf(step, id);
    if (update.kind === "end") return endAction(key, id, update.end);
    if (update.kind === "note") return noteAction(key, update.note);
    const view = update.view ?? requests.get(key);
    if (view) startAction(key, view);
  };

  const outputEvent = (step: string, event: StepOutputEvent) => {
    switch (event.type) {
      case "block-start":
        return openBlock(step, event.block, event.kind, "feedId" in event ? event.feedId : "");
      case "block-delta":
        if (!block || block.step !== step || block.id !== event.block) {
          openBlock(step, event.block, event.kind);
        }
        return block!.push(event.text);
      case "block-end":
        if (block?.step === step && block.id === event.block) endBlock();
        return;
      case "action":
        requests.set(keyOf(step, event.action.id), event.action);
        return;
      case "action-event":
        return actionEvent(step, event.entry);
      case "step-error":
        return print(
          `${style.yellow("!")} ${style.dim(fitWidth(`${oneLine(event.error.code)}: ${oneLine(event.error.message)}`, width() - 2))}`,
        );
      case "step-failed":
        endBlock();
        return print(style.red(`✗ step failed: ${oneLine(event.error.message)}`));
      case "step-end":
        return endBlock();
      default:
        return;
    }
  };

  const endRun = (notice: Extract<RunNotice, { type: "run-ended" }>) => {
    endBlock();
    waiting = undefined;
    const detached: string[] = [];
    for (const action of running.values()) {
      if (action.detached) continue;
      action.detached = true;
      detached.push(style.dim(`… ${oneLine(action.name)} still running`));
    }
    refresh();
    term.settle();
    print(...detached);
    const reason = notice.error ? `: ${oneLine(notice.error.message)}` : "";
    if (notice.status === "failed") print(style.red(`✗ failed${reason}`));
    else if (notice.status === "cancelled") print(style.yellow(`■ cancelled${reason}`));
    else if (notice.status === "interrupted") print(style.yellow(`■ interrupted${reason}`));
    else if (notice.status === "limit") print(style.yellow(`■ stopped by a limit${reason}`));
    if (notice.totals.steps > 1) print(style.dim(totalsLine(notice.totals)));
  };

  const handle = (notice: RunNotice) => {
    switch (notice.type) {
      case "run-started":
        if (notice.resumed) print(style.dim(`↺ resuming thread ${oneLine(notice.thread)}`));
        return;
      case "step-started":
        waiting = { step: notice.step, model: notice.model };
        return refresh();
      case "output":
        if (waiting?.step === notice.step) stopWaiting();
        return outputEvent(notice.step, notice.event);
      case "retry":
        return print(
          style.dim(
            style.yellow(
              `↻ ${oneLine(notice.message)} — retrying in ${formatDuration(notice.delayMs)} (attempt ${notice.attempt})`,
            ),
          ),
        );
      case "step-completed":
        if (waiting?.step === notice.step) waiting = undefined;
        endBlock();
        refresh();
        pressure = notice.pressure;
        return print(
          style.dim(
            stepLine(
              notice.usage.inputTokens,
              notice.usage.outputTokens,
              notice.costUsd,
              notice.pressure,
            ),
          ),
        );
      case "limit":
        endBlock();
        return print(
          style.yellow(
            `⚠ limit ${notice.limit} reached: ${limitValue(notice.limit, notice.value)} of ${limitValue(notice.limit, notice.max)}`,
          ),
        );
      case "queued":
        return print(style.dim(`… turn queued (position ${notice.position})`));
      case "turn-received":
        endBlock();
        // A source's delivery is one dim line: what arrived, never its digest.
        if (notice.delivery) {
          const line = deliveryLine(notice.actor, notice.text, notice.delivery);
          return print(style.dim(fitWidth(sanitizeText(line), width())));
        }
        return print(
          `${style.cyan("›")} ${style.bold(oneLine(notice.actor))}: ${oneLine(notice.text)}`,
        );
      case "handoff": {
        endBlock();
        const why =
          pressure !== undefined ? `context ${Math.round(pressure * 100)}%` : notice.reason;
        return print(style.dim(`— continued in a new thread (${oneLine(why)}) —`));
      }
      case "model-notice":
        endBlock();
        return print(style.dim(`note: ${oneLine(notice.text)}`));
      case "memory-notice":
        endBlock();
        return print(style.yellow(`warning: ${oneLine(notice.text)}`));
      case "run-ended":
        return endRun(notice);
    }
  };

  function guard(action: () => void) {
    if (closed) return;
    try {
      action();
    } catch (error) {
      if (faulted) return;
      faulted = true;
      try {
        const message = error instanceof Error ? error.message : String(error);
        output.write(
          `\nspool chat: the renderer failed (${oneLine(message)}); output may be incomplete\n`,
        );
      } catch {
        // The output itself is failing: nothing is left to tell.
      }
    }
  }

  return {
    observe: (notice) => guard(() => handle(notice)),
    userEcho: (text) =>
      guard(() => {
        term.startLine();
        const lines = sanitizeText(text).split("\n");
        print(
          ...lines.map((line, index) =>
            index === 0 ? `${style.bold(style.cyan("❯"))} ${line}` : `  ${line}`,
          ),
        );
      }),
    info: (line) => guard(() => print(style.dim(sanitizeText(line)))),
    error: (line) => guard(() => print(style.red(sanitizeText(line)))),
    close: () => {
      if (closed) return;
      guard(() => {
        endBlock();
        waiting = undefined;
        for (const action of running.values()) action.detached = true;
        refresh();
        term.settle();
      });
      closed = true;
      if (timer !== undefined) timers.clearInterval(timer);
      timer = undefined;
    },
  };
}

function limitValue(limit: RunLimitName, value: number): string {
  if (limit === "max_spend") return `$${value.toFixed(2)}`;
  if (limit === "wall_time") return formatDuration(value);
  return value.toLocaleString("en-US");
}

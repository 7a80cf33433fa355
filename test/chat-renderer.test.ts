import { describe, expect, it } from "vitest";
import { createChatRenderer } from "../src/cli/chat/index.js";
import type { RunNotice } from "../src/runtime/run-notice.js";
import {
  block,
  collectOutput,
  dispatched,
  failed,
  manualTimers,
  output,
  screenOf,
  stripColor,
  succeeded,
  totals,
} from "./support/chat-fakes.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: it matches colour codes
const SGR = /\x1b\[[0-9;]*m/;

/** A renderer on a fake terminal (or pipe) with a hand-stepped spinner and clock. */
function setup(
  options: {
    tty?: boolean;
    env?: Record<string, string>;
    columns?: number;
    frames?: string[];
  } = {},
) {
  const out = collectOutput(options.tty ?? true, options.columns ?? 80);
  const timers = manualTimers();
  let clock = 0;
  const renderer = createChatRenderer({
    output: out,
    env: options.env ?? { TERM: "xterm-256color" },
    now: () => clock,
    clockTimers: timers,
    ...(options.frames ? { spinnerFrames: options.frames } : {}),
  });
  return {
    out,
    timers,
    renderer,
    feed: (...notices: (RunNotice | RunNotice[])[]) => {
      for (const notice of notices.flat()) renderer.observe(notice);
    },
    advance: (ms: number) => {
      clock += ms;
    },
    /** What the terminal shows now, colours removed. */
    screen: () => screenOf(out.text).map(stripColor),
  };
}

const ended = (status: "completed" | "failed" | "cancelled", message?: string): RunNotice => ({
  type: "run-ended",
  thread: "t1",
  status,
  totals: totals(),
  ...(message ? { error: { code: "x", message } } : {}),
});

describe("chat renderer: text", () => {
  it("streams thoughts dimmed under one dim marker per block, indented", () => {
    const { out, feed } = setup();
    feed(block("s1", 0, "thought", ["\nI should ", "read it.\nThen answer."]));
    expect(out.text).toContain("\x1b[2m· thinking\x1b[22m\n");
    expect(out.text).toContain("\x1b[2mI should \x1b[22m");
    expect(out.text.match(/· thinking/g)).toHaveLength(1);
    expect(stripColor(out.text)).toBe("· thinking\n  I should read it.\n  Then answer.\n");
  });

  it("renders a non-final response like a final one, after the thought", () => {
    const { out, feed } = setup({ tty: false });
    feed(block("s1", 0, "thought", ["hmm"]));
    feed(
      output("s1", { type: "block-start", kind: "response", block: 1, final: false, at: pos }),
      output("s1", { type: "block-delta", kind: "response", block: 1, text: "**Done** `x`" }),
      output("s1", { type: "block-end", kind: "response", block: 1, closed: true, at: pos }),
    );
    expect(out.text).toBe("· thinking\n  hmm\nDone `x`\n");
  });
});

const pos = { offset: 0, line: 1, column: 1 };

describe("chat renderer: actions", () => {
  it("shows an action live with a spinner on a terminal, then ✓ with its duration", () => {
    const { feed, timers, screen, out, advance } = setup();
    feed(dispatched("s1", "a1", "fs.read", { path: "README.md" }));
    expect(screen()).toEqual(['⠋ tool fs.read {"path":"README.md"}']);
    expect(timers.active).toBe(1);
    timers.tick();
    expect(screen()).toEqual(['⠙ tool fs.read {"path":"README.md"}']);
    advance(2500);
    timers.tick();
    expect(screen()).toEqual(['⠹ tool fs.read 2s {"path":"README.md"}']);
    feed(succeeded("s1", "a1", 12));
    expect(screen()).toEqual(["✓ fs.read 12 ms"]);
    expect(out.text).toContain("\x1b[32m✓ fs.read\x1b[39m");
    expect(timers.active).toBe(0);
  });

  it("shows ✗ in red with the duration and the error message", () => {
    const { feed, screen, out } = setup();
    feed(
      dispatched("s1", "a1", "web.fetch", { url: "https://x" }),
      failed("s1", "a1", 1234, "HTTP 500"),
    );
    expect(screen()).toEqual(["✗ web.fetch 1.2 s — HTTP 500"]);
    expect(out.text).toContain("\x1b[31m✗ web.fetch\x1b[39m");
  });

  it("shows skipped, cancelled and timed-out actions with their reasons", () => {
    const { feed, screen } = setup({ tty: false });
    const event = (entry: unknown) => output("s1", { type: "action-event", entry } as never);
    feed(
      output("s1", {
        type: "action",
        action: {
          id: "b",
          type: "tool",
          mode: "async",
          name: "fs.write",
          parameters: {},
          dependsOn: ["a"],
          retry: 0,
          onError: "fail",
          inThought: false,
          span: { start: pos, end: pos },
        },
      }),
      event({
        type: "action.skipped",
        data: { action_id: "b", reason: "dependency-failed", message: "a failed" },
      }),
      dispatched("s1", "c", "sh.run"),
      event({ type: "action.cancelled", data: { action_id: "c", reason: "step cancelled" } }),
      dispatched("s1", "d", "slow"),
      event({
        type: "action.timed-out",
        data: {
          action_id: "d",
          attempt: 1,
          timeout_ms: 30000,
          duration_ms: 30004,
          will_retry: false,
        },
      }),
    );
    expect(screen()).toEqual([
      "↷ fs.write skipped — dependency-failed: a failed",
      "→ tool sh.run",
      "■ sh.run cancelled — step cancelled",
      "→ tool slow",
      "✗ slow 30.0 s — timed out after 30.0 s",
    ]);
  });

  it("keeps each of two concurrent actions on its own line when they finish in reverse order", () => {
    const { feed, timers, screen } = setup({ frames: ["-", "+"] });
    feed(dispatched("s1", "a", "first", { n: 1 }), dispatched("s1", "b", "second", { n: 2 }));
    expect(screen()).toEqual(['- tool first {"n":1}', '- tool second {"n":2}']);
    timers.tick();
    expect(screen()).toEqual(['+ tool first {"n":1}', '+ tool second {"n":2}']);
    feed(succeeded("s1", "b", 5));
    expect(screen()).toEqual(["✓ second 5 ms", '+ tool first {"n":1}']);
    timers.tick();
    expect(screen()).toEqual(["✓ second 5 ms", '- tool first {"n":1}']);
    feed(failed("s1", "a", 70, "nope"));
    expect(screen()).toEqual(["✓ second 5 ms", "✗ first 70 ms — nope"]);
    expect(timers.active).toBe(0);
  });

  it("writes streamed text above the live region and keeps the region at the bottom", () => {
    const { feed, screen, out } = setup({ frames: ["*"] });
    feed(dispatched("s1", "a", "slow"));
    feed(output("s1", { type: "block-start", kind: "response", block: 0, final: true, at: pos }));
    feed(
      output("s1", {
        type: "block-delta",
        kind: "response",
        block: 0,
        text: "Line **one**\nLine t",
      }),
    );
    expect(screen()).toEqual(["Line one", "* tool slow"]);
    feed(output("s1", { type: "block-delta", kind: "response", block: 0, text: "wo\n" }));
    expect(screen()).toEqual(["Line one", "Line two", "* tool slow"]);
    // The word being written ("line") waits for the space after it: it may still need wrapping.
    feed(output("s1", { type: "block-delta", kind: "response", block: 0, text: "partial line" }));
    feed(succeeded("s1", "a", 3000));
    // An action that ends mid-line does not break the line: its line follows the line's end.
    expect(screen()).toEqual(["Line one", "Line two", "partial"]);
    feed(output("s1", { type: "block-delta", kind: "response", block: 0, text: " done\nand " }));
    expect(screen()).toEqual(["Line one", "Line two", "partial line done", "✓ slow 3.0 s", "and"]);
    feed(ended("completed"));
    expect(out.text.endsWith("\n")).toBe(true);
  });

  it("prints an action's end after the line a response is writing, outside a terminal too", () => {
    const { feed, out } = setup({ tty: false });
    feed(dispatched("s1", "a", "clock.now"));
    feed(output("s1", { type: "block-start", kind: "response", block: 0, final: true, at: pos }));
    feed(output("s1", { type: "block-delta", kind: "response", block: 0, text: "Happy " }));
    feed(succeeded("s1", "a", 2));
    feed(output("s1", { type: "block-delta", kind: "response", block: 0, text: "Friday.\nBye" }));
    feed(succeeded("s1", "b", 1));
    feed(ended("completed"));
    expect(stripColor(out.text).split("\n")).toEqual([
      "→ tool clock.now",
      "Happy Friday.",
      "✓ clock.now 2 ms",
      // "Bye" waits for the word's end (it may still need wrapping): no partial line was open.
      "✓ b 1 ms",
      "Bye",
      "",
    ]);
  });

  it("prints one line at start and one at end outside a terminal, with no escape sequences", () => {
    const { feed, out, timers } = setup({ tty: false });
    feed(
      { type: "run-started", continuity: "c", thread: "t1", resumed: false },
      { type: "step-started", step: "s1", index: 0, model: "m", provider: "p" },
      block("s1", 0, "thought", ["think"]),
      dispatched("s1", "a", "fs.read", { path: "x" }),
      block("s1", 1, "response", ["# Hi\n**b** `c` [l](u)\n```js\nx\n```"]),
      succeeded("s1", "a", 12),
      {
        type: "step-completed",
        step: "s1",
        usage: { inputTokens: 1204, outputTokens: 310, cacheReadTokens: 0, cacheWriteTokens: 0 },
        costUsd: 0.0042,
        pressure: 0.12,
        totals: totals(),
      },
      ended("failed", "provider down"),
    );
    expect(out.text).not.toContain("\x1b");
    expect(timers.active).toBe(0);
    expect(out.text).toBe(
      [
        "· thinking",
        "  think",
        '→ tool fs.read {"path":"x"}',
        "Hi",
        "b `c` l (u)",
        "┌─ js",
        "│ x",
        "└─",
        "✓ fs.read 12 ms",
        "↳ 1,204 in · 310 out · $0.0042 · context 12%",
        "✗ failed: provider down",
        "",
      ].join("\n"),
    );
  });

  it("respects NO_COLOR on a terminal: live redraws but no colour", () => {
    const { feed, out, screen } = setup({ env: { NO_COLOR: "1", TERM: "xterm" } });
    feed(
      dispatched("s1", "a", "x"),
      block("s1", 0, "response", ["**bold**"]),
      succeeded("s1", "a", 1),
    );
    expect(out.text).not.toMatch(SGR);
    expect(out.text).toContain("\x1b[1A");
    expect(screen()).toEqual(["bold", "✓ x 1 ms"]);
  });

  it("fits action lines to the terminal width", () => {
    const { feed, screen } = setup({ columns: 40 });
    feed(dispatched("s1", "a", "fs.read", { path: "a/very/long/path/that/does/not/fit.txt" }));
    const [line] = screen();
    expect(line).toBe('⠋ tool fs.read {"path":"a/very/long/pa…');
    expect(Array.from(line!).length).toBe(39);
    feed(failed("s1", "a", 5, "x".repeat(100)));
    expect(Array.from(screen()[0]!).length).toBe(39);
  });
});

describe("chat renderer: status lines", () => {
  it("shows usage per step, omitting spend and pressure when unknown, and totals at the end", () => {
    const { feed, out } = setup({ tty: false });
    const usage = { inputTokens: 50, outputTokens: 7, cacheReadTokens: 0, cacheWriteTokens: 0 };
    feed(
      { type: "step-completed", step: "s1", usage, totals: totals() },
      { type: "step-completed", step: "s2", usage, costUsd: 1.5, totals: totals() },
      {
        type: "run-ended",
        thread: "t",
        status: "completed",
        totals: totals({ steps: 2, actions: 3, inputTokens: 100, outputTokens: 14, costUsd: 1.5 }),
      },
    );
    expect(out.text).toBe(
      "↳ 50 in · 7 out\n↳ 50 in · 7 out · $1.50\nΣ 2 steps · 3 actions · 100 in · 14 out · $1.50\n",
    );
  });

  it("shows retries, limits, queued turns, handoffs and a cancelled run as one line each", () => {
    const { feed, out } = setup();
    feed(
      { type: "retry", step: "s1", attempt: 2, delayMs: 2000, message: "overloaded" },
      { type: "limit", limit: "max_spend", value: 0.51, max: 0.5 },
      { type: "queued", turn: "u2", position: 1 },
      {
        type: "step-completed",
        step: "s1",
        usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 },
        pressure: 0.912,
        totals: totals(),
      },
      { type: "handoff", from: "t1", to: "t2", reason: "context" },
      ended("cancelled"),
    );
    expect(out.text).toContain("\x1b[2m\x1b[33m↻ overloaded — retrying in 2.0 s (attempt 2)");
    expect(out.text).toContain("\x1b[33m⚠ limit max_spend reached: $0.51 of $0.50\x1b[39m");
    expect(stripColor(out.text).split("\n")).toEqual([
      "↻ overloaded — retrying in 2.0 s (attempt 2)",
      "⚠ limit max_spend reached: $0.51 of $0.50",
      "… turn queued (position 1)",
      "↳ 1 in · 1 out · context 91%",
      "— continued in a new thread (context 91%) —",
      "■ cancelled",
      "",
    ]);
  });

  it("shows a waiting spinner between step start and the first output on a terminal", () => {
    const { feed, screen, timers } = setup({ frames: ["~"] });
    feed({ type: "step-started", step: "s1", index: 0, model: "claude-x", provider: "anthropic" });
    expect(screen()).toEqual(["~ waiting for claude-x"]);
    feed(block("s1", 0, "response", ["Hi"]));
    expect(screen()).toEqual(["Hi"]);
    expect(timers.active).toBe(0);
  });
});

describe("chat renderer: robustness", () => {
  it("swallows its own fault after one plain line and keeps rendering", () => {
    const { feed, out } = setup({ tty: false });
    const broken = output("s1", {
      type: "action-event",
      entry: { type: "action.succeeded", data: null },
    } as never);
    expect(() => feed(broken, broken)).not.toThrow();
    expect(out.text.match(/renderer failed/g)).toHaveLength(1);
    feed(block("s1", 0, "response", ["still here"]));
    expect(out.text.endsWith("still here\n")).toBe(true);
  });

  it("stops its timer and clears the live region on close", () => {
    const { feed, renderer, timers, screen, out } = setup();
    feed(dispatched("s1", "a", "forever"), block("s1", 0, "response", ["tail without newline"]));
    expect(timers.active).toBe(1);
    renderer.close();
    expect(timers.active).toBe(0);
    expect(screen()).toEqual(["tail without newline"]);
    const length = out.text.length;
    feed(succeeded("s1", "a", 1));
    expect(out.text.length).toBe(length);
  });

  it("leaves actions still running at the end of a run out of the live region", () => {
    const { feed, screen, timers } = setup();
    feed(dispatched("s1", "bg", "watch"), ended("completed"));
    expect(timers.active).toBe(0);
    expect(screen()).toEqual(["… watch still running"]);
    feed(succeeded("s1", "bg", 9000));
    expect(screen()).toEqual(["… watch still running", "✓ watch 9.0 s"]);
  });

  it("echoes user turns and prints info and error lines", () => {
    const { renderer, out } = setup({ tty: false });
    renderer.userEcho("hello\nworld");
    renderer.info("connected");
    renderer.error("bad key");
    expect(out.text).toBe("❯ hello\n  world\nconnected\nbad key\n");
  });
});

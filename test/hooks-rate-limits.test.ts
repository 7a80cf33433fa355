/**
 * Hooks' rate limits: `rate_limit: { min_interval_ms, max_per_hour }` on the stream events, parsed
 * with located errors, and applied by the engine on the logged time of each triggering event
 * (never the wall clock): a held-back firing is left out and not counted; the same calls give
 * the same firings; a restarted engine that `remember`s the logged firings holds back the same.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  createHookEngine,
  type HookEntry,
  parseHookFile,
  type StreamChunkHookPayload,
} from "../src/hooks/index.js";
import { ConfigError } from "../src/spec/index.js";

function hooks(text: string): HookEntry[] {
  return parseHookFile(text, { path: "/x/.ai/hooks/streams.yaml", tier: "project" });
}

const chunk = (errors: number): StreamChunkHookPayload => ({
  source_id: "app-log",
  kind: "file",
  target: "logs/app.log",
  from_chunk: 1,
  to_chunk: 1,
  chunks: 1,
  lines: 100,
  bytes: 4000,
  skipped: 0,
  matches: { error: errors },
  cursor: { offset: 4000 },
});

const limited = (limit: string) =>
  hooks(`
- id: error_burst
  event: stream_chunk_received
  condition: { path: matches.error, op: gte, value: 50 }
  rate_limit: ${limit}
  action: { item_type: tool, item_id: notify, params: { errors: "\${event.matches.error}" } }
- id: every_chunk
  event: stream_chunk_received
  action: { item_type: tool, item_id: count }
`);

const MINUTE = 60_000;

describe("rate_limit in hook files", () => {
  it("parses min_interval_ms and max_per_hour", () => {
    const [hook] = limited("{ min_interval_ms: 60000, max_per_hour: 10 }");
    expect(hook).toMatchObject({
      id: "error_burst",
      rateLimit: { minIntervalMs: 60_000, maxPerHour: 10 },
    });
  });

  it("refuses a limit on an event without a logged time, an empty one and unknown fields, each at its line", () => {
    const text = `
- id: on_error
  event: error
  rate_limit: { min_interval_ms: 1000 }
  action: { item_type: tool, item_id: spool.fail }
- id: empty
  event: stream_source_exhausted
  rate_limit: {}
  action: { item_type: tool, item_id: x }
- id: typo
  event: stream_chunk_received
  rate_limit: { min_interval: 1000 }
  action: { item_type: tool, item_id: x }
- id: negative
  event: stream_chunk_received
  rate_limit: { max_per_hour: 0 }
  action: { item_type: tool, item_id: x }
`;
    let caught: unknown;
    try {
      hooks(text);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ConfigError);
    const message = (caught as ConfigError).message;
    expect(message).toContain(
      "streams.yaml:4: [0].rate_limit: is only for stream_chunk_received and stream_source_exhausted",
    );
    expect(message).toContain("streams.yaml:8: [1].rate_limit: names no limit");
    expect(message).toContain("streams.yaml:12: [2].rate_limit.min_interval: unknown field");
    expect(message).toContain("streams.yaml:16: [3].rate_limit.max_per_hour: must be at least 1");
  });
});

describe("the engine's rate limits", () => {
  it("holds a firing back within min_interval_ms of the last one, by the events' times; others fire each time", () => {
    const engine = createHookEngine({ hooks: limited("{ min_interval_ms: 60000 }") });
    const times = [0, 10_000, 59_999, 60_000, 61_000, 180_000];
    const fired = times.map((at) =>
      engine.evaluate("stream_chunk_received", chunk(80), "t1", at).map((firing) => firing.hook),
    );
    expect(fired).toEqual([
      ["error_burst", "every_chunk"],
      ["every_chunk"],
      ["every_chunk"],
      ["error_burst", "every_chunk"],
      ["every_chunk"],
      ["error_burst", "every_chunk"],
    ]);
    // The condition still decides: a quiet chunk never fires it, limit or not.
    expect(engine.evaluate("stream_chunk_received", chunk(3), "t1", 999_999)).toHaveLength(1);
  });

  it("allows at most max_per_hour firings in any hour", () => {
    const engine = createHookEngine({ hooks: limited("{ max_per_hour: 2 }") });
    const at = [0, MINUTE, 2 * MINUTE, 59 * MINUTE, 60 * MINUTE + 1, 61 * MINUTE + 1];
    const fired = at.map(
      (time) => engine.evaluate("stream_chunk_received", chunk(99), "t1", time).length === 2,
    );
    expect(fired).toEqual([true, true, false, false, true, true]);
  });

  it("never fires more often than the limit allows, whatever the times (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 10 * MINUTE }), { minLength: 1, maxLength: 60 }),
        fc.integer({ min: 1, max: 5 * MINUTE }),
        fc.integer({ min: 1, max: 5 }),
        (gaps, interval, perHour) => {
          const engine = createHookEngine({
            hooks: limited(`{ min_interval_ms: ${interval}, max_per_hour: ${perHour} }`),
          });
          let now = 0;
          const firings: number[] = [];
          for (const gap of gaps) {
            now += gap;
            const hooksFired = engine.evaluate("stream_chunk_received", chunk(60), "t", now);
            if (hooksFired.some((firing) => firing.hook === "error_burst")) firings.push(now);
          }
          for (let index = 1; index < firings.length; index++) {
            expect(firings[index]! - firings[index - 1]!).toBeGreaterThanOrEqual(interval);
          }
          for (const end of firings) {
            const inHour = firings.filter((time) => time > end - 3_600_000 && time <= end);
            expect(inHour.length).toBeLessThanOrEqual(perHour);
          }
          // The first event that meets the condition always fires.
          expect(firings[0]).toBe(gaps[0]);
        },
      ),
    );
  });

  it("holds back after a restart what the logged firings say (remember), and forgets them with resetRates", () => {
    const engine = createHookEngine({ hooks: limited("{ min_interval_ms: 60000 }") });
    engine.remember("error_burst", 100_000);
    expect(engine.evaluate("stream_chunk_received", chunk(70), "t", 130_000)).toHaveLength(1);
    engine.resetRates();
    expect(engine.evaluate("stream_chunk_received", chunk(70), "t", 130_000)).toHaveLength(2);
    // A hook without a limit is never counted.
    engine.remember("every_chunk", 130_000);
    expect(engine.evaluate("stream_chunk_received", chunk(1), "t", 130_001)).toHaveLength(1);
  });

  it("applies no limit to an evaluation without a logged time", () => {
    const engine = createHookEngine({ hooks: limited("{ min_interval_ms: 60000 }") });
    expect(engine.evaluate("stream_chunk_received", chunk(70), "t")).toHaveLength(2);
    expect(engine.evaluate("stream_chunk_received", chunk(70), "t")).toHaveLength(2);
  });
});

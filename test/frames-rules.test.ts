/**
 * The pure parts of the frames module: the limits on frame time (rate, size, keyframes), the
 * change rules (cut, forced, EMA), the latest-wins queue's drop accounting, and the MJPEG
 * splitter giving the same images for any chunking of the same stream.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  BoundedQueue,
  DEFAULT_CHANGE_RULES,
  decideChange,
  FrameError,
  FrameLimiter,
  type IncomingFrame,
  initialChangeState,
  JpegSplitter,
  notedChange,
} from "../src/frames/index.js";

const frame = (at: number, bytes = 100, keyframe?: boolean): IncomingFrame => ({
  data: Buffer.alloc(bytes, 1),
  mime: "image/jpeg",
  at,
  source: "s",
  ...(keyframe !== undefined ? { keyframe } : {}),
});

describe("frame limits", () => {
  it("admits at most maxFramesPerMinute (plus the burst) of a faster source, evenly", () => {
    const limiter = new FrameLimiter({ maxFramesPerMinute: 120, burst: 2 });
    const admitted: number[] = [];
    for (let at = 0; at < 60_000; at += 100) {
      if (limiter.admit(frame(at)).admit) admitted.push(at);
    }
    expect(admitted.length).toBeGreaterThanOrEqual(120);
    expect(admitted.length).toBeLessThanOrEqual(122);
    const gaps = admitted.slice(3).map((at, index) => at - admitted[index + 2]!);
    expect(new Set(gaps)).toEqual(new Set([500]));
  });

  it("refuses empty and oversized frames and marks a keyframe at least every interval", () => {
    const limiter = new FrameLimiter({
      maxFrameBytes: 1_000,
      keyframeIntervalMs: 1_000,
      maxFramesPerMinute: 6_000,
      burst: 5,
    });
    expect(limiter.admit(frame(0, 0))).toEqual({ admit: false, reason: "empty", bytes: 0 });
    expect(limiter.admit(frame(0, 1_001))).toEqual({
      admit: false,
      reason: "too-big",
      bytes: 1_001,
    });
    const keyframes: number[] = [];
    for (let at = 0; at <= 3_000; at += 250) {
      const admission = limiter.admit(frame(at, 100, at === 1_750 ? true : undefined));
      if (admission.admit && admission.frame.keyframe) keyframes.push(at);
    }
    expect(keyframes).toEqual([0, 1_000, 1_750, 2_750]);
  });

  it("names the option and the accepted values when one is wrong", () => {
    expect(() => new FrameLimiter({ maxFramesPerMinute: 0 })).toThrow(FrameError);
    expect(() => new FrameLimiter({ maxFramesPerMinute: -1 })).toThrow(
      /maxFramesPerMinute must be a positive number/,
    );
  });
});

describe("change rules", () => {
  const rules = DEFAULT_CHANGE_RULES;
  it("calls a cut only for a jump that is also new against the noted frame", () => {
    let state = notedChange(initialChangeState(), 0);
    for (let at = 100; at < 1_000; at += 100)
      state = decideChange(state, { score: 0.05, motion: 0.02, at, duplicate: false }, rules).state;
    const jump = decideChange(
      state,
      { score: 0.4, motion: 0.4, at: 1_000, duplicate: false },
      rules,
    );
    expect(jump.sceneCut).toBe(true);
    // The same jump back to what was noted is not new.
    expect(
      decideChange(state, { score: 0.01, motion: 0.4, at: 1_000, duplicate: false }, rules)
        .sceneCut,
    ).toBe(false);
    // A large drift reached in small steps is not a cut.
    expect(
      decideChange(state, { score: 0.6, motion: 0.03, at: 1_000, duplicate: false }, rules)
        .sceneCut,
    ).toBe(false);
    // Nor is a jump that the usual motion makes ordinary.
    let busy = state;
    for (let at = 1_000; at < 3_000; at += 100)
      busy = decideChange(busy, { score: 0.3, motion: 0.2, at, duplicate: false }, rules).state;
    expect(
      decideChange(busy, { score: 0.5, motion: 0.3, at: 3_000, duplicate: false }, rules).sceneCut,
    ).toBe(false);
  });

  it("forces a refresh before any note and after maxSkipMs, never for a duplicate", () => {
    const fresh = initialChangeState();
    expect(
      decideChange(fresh, { score: 1, motion: undefined, at: 0, duplicate: false }, rules).forced,
    ).toBe(true);
    const noted = notedChange(fresh, 1_000);
    const at = (ms: number, duplicate = false) =>
      decideChange(noted, { score: 0.001, motion: 0, at: ms, duplicate }, rules).forced;
    expect(at(1_000 + rules.maxSkipMs - 1)).toBe(false);
    expect(at(1_000 + rules.maxSkipMs)).toBe(true);
    expect(at(1_000 + rules.maxSkipMs, true)).toBe(false);
  });

  it("reports the EMA from before the frame, and folds with alpha", () => {
    const first = decideChange(
      initialChangeState(),
      { score: 0.5, motion: undefined, at: 0, duplicate: false },
      rules,
    );
    expect(first.ema).toBe(0);
    const second = decideChange(
      first.state,
      { score: 0, motion: 0, at: 100, duplicate: false },
      rules,
    );
    expect(second.ema).toBe(0.5);
    expect(second.state.scoreEma).toBeCloseTo(0.5 * (1 - rules.alpha));
  });
});

describe("latest-wins queue", () => {
  it("drops the oldest waiting items and says how many before the next one taken", async () => {
    const queue = new BoundedQueue<number>(2, "latest");
    for (const item of [1, 2, 3, 4, 5]) await queue.push(item);
    queue.end();
    expect(await queue.take()).toEqual({ item: 4, droppedBefore: 3 });
    expect(await queue.take()).toEqual({ item: 5, droppedBefore: 0 });
    expect(await queue.take()).toBeUndefined();
    expect(queue.dropped).toBe(3);
  });
});

describe("MJPEG splitting", () => {
  const image = (fill: number, length: number) => {
    const data = Buffer.alloc(length, fill);
    data[0] = 0xff;
    data[1] = 0xd8;
    data[length - 2] = 0xff;
    data[length - 1] = 0xd9;
    return data;
  };
  const images = [image(0x11, 40), image(0xff, 33), image(0xd9, 50), image(0x22, 200)];
  // 0xff fill: FF bytes everywhere inside, as stuffed entropy data would not have; 0xd9 fill: D9
  // bytes not preceded by FF. Junk between images is skipped.
  const stream = Buffer.concat([
    Buffer.from([0x00, 0xd9]),
    images[0]!,
    images[1]!,
    images[2]!,
    Buffer.from([1, 2]),
    images[3]!,
  ]);

  it("gives the same images for any chunking, and refuses one over the limit", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 40 }),
        (sizes) => {
          const splitter = new JpegSplitter(100);
          const pieces = [];
          let at = 0;
          for (let index = 0; at < stream.length; index++) {
            const size = sizes[index % sizes.length]!;
            pieces.push(...splitter.push(stream.subarray(at, at + size)));
            at += size;
          }
          expect(pieces).toEqual([
            { kind: "frame", data: images[0] },
            { kind: "frame", data: images[1] },
            { kind: "frame", data: images[2] },
            { kind: "too-big", bytes: 200 },
          ]);
        },
      ),
    );
  });
});

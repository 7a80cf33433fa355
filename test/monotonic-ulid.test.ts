import fc from "fast-check";
import { decodeTime, isValid } from "ulid";
import { describe, expect, it } from "vitest";
import { monotonicUlids } from "../src/log/monotonic-ulid.js";

describe("monotonic ULIDs", () => {
  it("are valid ULIDs of their time, in the order they were made, for any clock", () => {
    // A clock that moves on, stands still and steps back, as real clocks do.
    const steps = fc.array(fc.integer({ min: -5, max: 5 }), { minLength: 1, maxLength: 300 });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 47 }), steps, (start, deltas) => {
        let clock = start;
        let latest = -1;
        const next = monotonicUlids(() => clock);
        const ids: string[] = [];
        for (const delta of deltas) {
          clock = Math.max(0, clock + delta);
          latest = Math.max(latest, clock);
          const id = next();
          expect(isValid(id)).toBe(true);
          // The time is the clock's, or the newest time seen when the clock stepped back.
          expect(decodeTime(id)).toBe(latest);
          ids.push(id);
        }
        for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it("counts up within a millisecond, carrying across digits", () => {
    const next = monotonicUlids(() => 1_700_000_000_000);
    const ids = Array.from({ length: 5_000 }, () => next());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids.map((id) => id.slice(0, 10))).size).toBe(1);
  });

  it("draws a fresh random part in each new millisecond", () => {
    let clock = 1_700_000_000_000;
    const next = monotonicUlids(() => clock++);
    const randoms = Array.from({ length: 2_000 }, () => next().slice(10));
    expect(new Set(randoms).size).toBe(randoms.length);
  });
});

import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  createFeedEngine,
  defineInternalSource,
  FeedError,
  type FeedManifest,
  formatClock,
  parseFeedManifest,
  secretMarker,
} from "../src/feeds/index.js";
import { ConfigError } from "../src/spec/index.js";
import { fakeTime, memoryFeedLog } from "./support/feeds-fakes.js";

const INSTANT = Date.parse("2024-06-15T12:34:56.789Z");

/** An engine whose clock reads `INSTANT` and whose random source yields `randoms` in turn. */
function engineWith(options: {
  randoms?: number[];
  env?: Record<string, string>;
  allow?: string[];
  allowSecrets?: string[];
  manifest?: FeedManifest;
}) {
  const time = fakeTime(INSTANT);
  const log = memoryFeedLog(time.clock);
  const randoms = [...(options.randoms ?? [])];
  const engine = createFeedEngine({
    log: log.log,
    clock: time.clock,
    timers: time.timers,
    random: () => randoms.shift() ?? 0,
    env: options.env ?? {},
    environment: { allow: options.allow ?? [], allowSecrets: options.allowSecrets ?? [] },
    ...(options.manifest ? { manifest: options.manifest } : {}),
  });
  return { engine, log, time };
}

/** The value an internal feed of `action` with `params` resolves to. */
async function read(
  action: string,
  params: Record<string, unknown>,
  options: Parameters<typeof engineWith>[0] = {},
): Promise<string | undefined> {
  const { engine } = engineWith(options);
  await engine.add({ id: "f", type: "on_demand", source: { type: "internal", action, params } });
  const [entry] = await engine.resolve();
  if (entry?.error) throw new Error(entry.error.message);
  return entry?.value;
}

async function addFails(
  action: string,
  params: Record<string, unknown>,
  options: Parameters<typeof engineWith>[0] = {},
): Promise<FeedError> {
  const { engine, log } = engineWith(options);
  const error = await engine
    .add({ id: "f", type: "on_demand", source: { type: "internal", action, params } })
    .then(
      () => undefined,
      (rejected: unknown) => rejected,
    );
  expect(error).toBeInstanceOf(FeedError);
  expect(log.events).toEqual([]);
  return error as FeedError;
}

describe("system_clock", () => {
  it.each([
    ["ISO8601", "UTC", "2024-06-15T12:34:56Z"],
    ["ISO8601", "Europe/Berlin", "2024-06-15T14:34:56+02:00"],
    ["ISO8601", "America/New_York", "2024-06-15T08:34:56-04:00"],
    ["ISO8601", "Asia/Kolkata", "2024-06-15T18:04:56+05:30"],
    ["ISO8601", "America/St_Johns", "2024-06-15T10:04:56-02:30"],
    ["iso8601", "Etc/GMT+2", "2024-06-15T10:34:56-02:00"],
    ["RFC2822", "UTC", "Sat, 15 Jun 2024 12:34:56 +0000"],
    ["RFC2822", "Europe/Berlin", "Sat, 15 Jun 2024 14:34:56 +0200"],
    ["unix", "UTC", "1718454896"],
    ["unix_ms", "Asia/Tokyo", "1718454896789"],
    ["YYYY-MM-DD HH:mm:ss", "UTC", "2024-06-15 12:34:56"],
    [
      "ddd, DD MMM YYYY [at] HH:mm:ss.SSS Z",
      "Asia/Tokyo",
      "Sat, 15 Jun 2024 at 21:34:56.789 +09:00",
    ],
  ])("%s in %s is %s", (format, timezone, expected) => {
    expect(formatClock(INSTANT, format, timezone)).toBe(expected);
  });

  it("follows daylight saving time and date changes across zones", () => {
    expect(formatClock(Date.parse("2024-01-15T12:00:00Z"), "ISO8601", "Europe/Berlin")).toBe(
      "2024-01-15T13:00:00+01:00",
    );
    expect(formatClock(Date.parse("2024-06-15T23:30:00Z"), "RFC2822", "Asia/Tokyo")).toBe(
      "Sun, 16 Jun 2024 08:30:00 +0900",
    );
    expect(formatClock(Date.parse("2024-06-15T00:00:00Z"), "HH:mm", "UTC")).toBe("00:00");
  });

  it("reads the injected clock, defaulting to ISO8601 in UTC", async () => {
    expect(await read("system_clock", {})).toBe("2024-06-15T12:34:56Z");
    expect(await read("system_clock", { format: "ISO8601", timezone: "UTC" })).toBe(
      "2024-06-15T12:34:56Z",
    );
    const { engine, time } = engineWith({});
    await engine.add({
      id: "clock",
      type: "on_demand",
      source: { type: "internal", action: "system_clock", params: { format: "unix" } },
    });
    await engine.resolve();
    await time.advance(90_000);
    expect((await engine.resolve())[0]!.value).toBe("1718454986");
  });

  it("refuses an unknown time zone precisely, when the feed is added", async () => {
    const error = await addFails("system_clock", { timezone: "Mars/Olympus_Mons" });
    expect(error.code).toBe("feed.invalid");
    expect(error.message).toBe(
      'feed "f": source.params.timezone: "Mars/Olympus_Mons" is not a time zone Intl knows; use an IANA name such as "UTC", "Europe/Berlin" or "America/New_York"',
    );
  });

  it("refuses a format that is neither named nor a pattern, and unknown params", async () => {
    expect((await addFails("system_clock", { format: "ISO" })).message).toBe(
      'feed "f": source.params.format: "ISO" is neither a named format (ISO8601, RFC2822, unix, unix_ms) nor a pattern with the tokens YYYY MM MMM DD ddd HH mm ss SSS Z',
    );
    expect((await addFails("system_clock", { zone: "UTC" })).message).toBe(
      'feed "f": source.params.zone: unknown field "zone": system_clock takes format, timezone',
    );
  });
});

describe("random", () => {
  it("draws from the injected random source: floats in [min, max), integers in [min, max]", async () => {
    expect(await read("random", {}, { randoms: [0.25] })).toBe("0.25");
    expect(await read("random", { min: 10, max: 20 }, { randoms: [0.5] })).toBe("15");
    expect(await read("random", { min: 1, max: 6, integer: true }, { randoms: [0] })).toBe("1");
    expect(await read("random", { min: 1, max: 6, integer: true }, { randoms: [0.999999] })).toBe(
      "6",
    );
    expect(await read("random", { min: -3, max: 3, integer: true }, { randoms: [0.5] })).toBe("0");
  });

  it("makes a version 4 UUID from 16 random bytes", async () => {
    const randoms = Array.from({ length: 16 }, (_, index) => index / 16);
    expect(await read("random", { kind: "uuid" }, { randoms })).toBe(
      "00102030-4050-4070-8090-a0b0c0d0e0f0",
    );
  });

  it("is the same for the same random sequence", async () => {
    const randoms = [0.1, 0.7, 0.3];
    const first = await read("random", { min: 0, max: 100, integer: true }, { randoms });
    const again = await read("random", { min: 0, max: 100, integer: true }, { randoms });
    expect(first).toBe("10");
    expect(again).toBe(first);
  });

  it.each([
    [{ min: 5, max: 1 }, "source.params.min: must not be greater than max (1)"],
    [
      { integer: true, min: 1 },
      "source.params.max: is required with integer: true (the largest value, included)",
    ],
    [{ integer: true, max: 2.5 }, "source.params.max: must be a whole number with integer: true"],
    [{ kind: "uuid", min: 1 }, "source.params.min: does not apply to kind uuid"],
    [{ kind: "dice" }, 'source.params.kind: must be "number" or "uuid"'],
  ])("refuses %j", async (params, message) => {
    expect((await addFails("random", params)).message).toBe(`feed "f": ${message}`);
  });
});

describe("environment", () => {
  const env = {
    HOME: "/home/ada",
    DEBUG_MODE: "1",
    GITHUB_TOKEN: "ghp_secret",
    OPENAI_API_KEY: "sk-x",
  };

  it("shows allow-listed variables as JSON, unset ones as null", async () => {
    expect(
      await read(
        "environment",
        { names: ["HOME", "UNSET_ONE"] },
        { env, allow: ["HOME", "UNSET_ONE"] },
      ),
    ).toBe('{\n  "HOME": "/home/ada",\n  "UNSET_ONE": null\n}');
  });

  it("refuses a name that is not allow-listed, without reading it", async () => {
    const error = await addFails(
      "environment",
      { names: ["HOME", "DEBUG_MODE"] },
      { env, allow: ["HOME"] },
    );
    expect(error.code).toBe("feed.env-not-allowed");
    expect(error.message).toBe(
      'feed "f": environment variable DEBUG_MODE is not on the feed allow-list. An operator can add it under feed_environment.allow in the manifest',
    );
  });

  it("refuses secret-looking names even when allow-listed, unless listed as secrets", async () => {
    const error = await addFails(
      "environment",
      { names: ["GITHUB_TOKEN"] },
      { env, allow: ["GITHUB_TOKEN"] },
    );
    expect(error.message).toBe(
      'feed "f": environment variable GITHUB_TOKEN looks like a secret (its name contains TOKEN) and is refused although it is on the allow-list. List it under feed_environment.allow_secrets to show it to the model on purpose',
    );
    expect(error.message).not.toContain("ghp_secret");
    const notListed = await addFails("environment", { names: ["OPENAI_API_KEY"] }, { env });
    expect(notListed.message).toContain(
      "(and, since it looks like a secret, under feed_environment.allow_secrets)",
    );
    expect(
      await read(
        "environment",
        { names: ["GITHUB_TOKEN"] },
        { env, allowSecrets: ["GITHUB_TOKEN"] },
      ),
    ).toBe('{\n  "GITHUB_TOKEN": "ghp_secret"\n}');
  });

  it.each([
    ["OPENAI_API_KEY", "KEY"],
    ["AWS_SECRET_ACCESS_KEY", "SECRET"],
    ["GITHUB_TOKEN", "TOKEN"],
    ["PASSWORD", "PASSWORD"],
    ["db_password", "PASSWORD"],
    ["PGPASSWORD", "PASSWORD"],
    ["GH_PAT", "PAT"],
    ["SSH_PRIVATE_KEY_PATH", "PRIVATE"],
    ["SENTRY_DSN", "DSN"],
    ["HOME", undefined],
    ["PWD", undefined],
    ["MONKEY_COUNT", undefined],
    ["KEYBOARD_LAYOUT", undefined],
    ["DEBUG_MODE", undefined],
  ])("secretMarker(%s) is %s", (name, marker) => {
    expect(secretMarker(name)).toBe(marker);
  });

  it("takes the allow-list from the manifest, and refuses a manifest feed that breaks it", () => {
    const manifest = parseFeedManifest(
      [
        "feed_environment:",
        "  allow: [HOME]",
        "context_feeds:",
        "  - id: env",
        "    type: on_demand",
        "    source: { type: internal, action: environment, params: { names: [HOME, GITHUB_TOKEN] } }",
      ].join("\n"),
      { env: {} },
    );
    expect(() => engineWith({ env, manifest })).toThrow(ConfigError);
    expect(() => engineWith({ env, manifest })).toThrow(
      /^context_feeds: feed "env": environment variable GITHUB_TOKEN is not on the feed allow-list/,
    );
  });

  it("re-checks the allow-list on every read (a resumed registry meets today's policy)", async () => {
    const before = engineWith({ env, allow: ["HOME"] });
    await before.engine.add({
      id: "f",
      type: "on_demand",
      source: { type: "internal", action: "environment", params: { names: ["HOME"] } },
    });
    expect((await before.engine.resolve())[0]!.value).toContain("/home/ada");
    const time = fakeTime(INSTANT);
    const log = memoryFeedLog(time.clock);
    const after = createFeedEngine({
      log: log.log,
      clock: time.clock,
      timers: time.timers,
      env,
      state: before.engine.state(),
    });
    const [entry] = await after.resolve();
    expect(entry!.value).toContain("/home/ada"); // the old value stays, marked stale
    expect(entry!.error).toMatchObject({ code: "feed.env-not-allowed" });
    expect(log.types()).toEqual(["feed.failed"]);
  });
});

describe("internal sources in general", () => {
  it("refuses an unknown internal source, naming the ones there are", async () => {
    const error = await addFails("debug_context", {});
    expect(error.code).toBe("feed.unknown-source");
    expect(error.message).toBe(
      'feed "f": there is no internal source "debug_context" (there are: system_clock, random, environment). Use one of those, or pass your own to createFeedEngine({ internalSources })',
    );
  });

  it("takes custom internal sources beside the built-ins", async () => {
    const time = fakeTime();
    const log = memoryFeedLog(time.clock);
    const engine = createFeedEngine({
      log: log.log,
      clock: time.clock,
      timers: time.timers,
      internalSources: {
        debug_context: defineInternalSource({
          name: "debug_context",
          description: "Debug facts.",
          parameters: z.strictObject({ verbose: z.boolean().default(false) }),
          read: (params, context) => ({
            verbose: params.verbose,
            feed: context.feedId,
            now: context.now,
          }),
        }),
      },
    });
    await engine.add({
      id: "debug_info",
      type: "on_demand",
      source: { type: "internal", action: "debug_context", params: { verbose: true } },
    });
    expect((await engine.resolve())[0]!.value).toBe(
      `{\n  "verbose": true,\n  "feed": "debug_info",\n  "now": ${time.clock.now()}\n}`,
    );
  });

  it("records a source that throws as feed.failed", async () => {
    const time = fakeTime();
    const log = memoryFeedLog(time.clock);
    const engine = createFeedEngine({
      log: log.log,
      clock: time.clock,
      timers: time.timers,
      internalSources: {
        broken: defineInternalSource({
          name: "broken",
          description: "Always fails.",
          parameters: z.object({}),
          read: () => {
            throw new Error("disk on fire");
          },
        }),
        cyclic: defineInternalSource({
          name: "cyclic",
          description: "Returns a cycle.",
          parameters: z.object({}),
          read: () => {
            const value: Record<string, unknown> = {};
            value.self = value;
            return value;
          },
        }),
      },
    });
    await engine.add({
      id: "a",
      type: "on_demand",
      source: { type: "internal", action: "broken" },
    });
    await engine.add({
      id: "b",
      type: "on_demand",
      source: { type: "internal", action: "cyclic" },
    });
    await engine.resolve();
    expect(
      log.of("feed.failed").map((data) => [data.feed_id, (data.error as { code: string }).code]),
    ).toEqual([
      ["a", "feed.source-failed"],
      ["b", "feed.unrenderable"],
    ]);
  });
});

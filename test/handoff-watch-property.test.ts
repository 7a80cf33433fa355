/**
 * Nothing is lost at a handoff with a stream watch (issue 18, part 3), over random histories
 * (fast-check) that interleave user turns, screen questions (the current frame attached as an
 * image), notes, compactions that finish late (notes keep arriving meanwhile), commentary with
 * inline notes, and handoffs. Real SQLite store, the real runtime and `StreamWatch`, scripted
 * models; the image summarizer is the agent's summarizer, as for a watching agent. Checked:
 *
 * - every step's notes block (its `context.feeds`) is the fold of the watch events before it, and
 *   holds every note logged before it exactly once: in the running summary or as a note line,
 *   never lost to a compaction, never in both;
 * - after every handoff the continuation's first request holds the image summarizer's summary
 *   and the notes block, and no image; the seed carries no image;
 * - no request of a thread ever holds an image other than those of turns that thread ran (so no
 *   image crosses into a continuation), and each image counts toward the step's estimated tokens;
 * - every message of an old thread is covered at its handoff (the handoff invariant);
 * - the log replays identically with no watch and no model (the watch's record is input).
 *
 * Runs: SPOOL_WATCH_HANDOFF_RUNS (default 10); the seed: SPOOL_WATCH_HANDOFF_SEED.
 */
import fc from "fast-check";
import sharp from "sharp";
import { beforeAll, describe, expect, it } from "vitest";
import { HANDOFF_HEADING, IMAGE_SUMMARIZER, selectSummarizer } from "../src/continuity/index.js";
import { mergeCoordinationLayers } from "../src/directives/index.js";
import {
  DEFAULT_WATCH_SETTINGS,
  foldWatchEvents,
  isScreenQuestion,
  renderWatchNotes,
  StreamWatch,
} from "../src/frames/index.js";
import type { EventStore } from "../src/log/index.js";
import {
  createTokenEstimator,
  IMAGE_TOKENS,
  type ProviderRequest,
  type TokenEstimator,
} from "../src/providers/index.js";
import { replayContinuity } from "../src/replay/index.js";
import type { AgentRuntimeOptions, RuntimeWatch } from "../src/runtime/index.js";
import { type EventData, isEvent, type SpoolEvent } from "../src/spec/index.js";
import {
  longRunAgent,
  longRunRuntime,
  routedProvider,
  scriptedSummarizer,
  smallCatalogue,
  summarizerSpec,
} from "./support/continuity-run.js";
import { checkHandoffCoverage } from "./support/handoff-coverage.js";
import { tempStore } from "./support/transcripts.js";
import {
  noteTokens,
  scoredFrame,
  scriptedWatchModel,
  turnText,
  type WatchHistory,
  watchForeground,
  watchHistoryArbitrary,
} from "./support/watch-handoff-histories.js";

const continuity = "home";
const runs = Number(process.env.SPOOL_WATCH_HANDOFF_RUNS ?? 10);
const seed =
  process.env.SPOOL_WATCH_HANDOFF_SEED !== undefined
    ? { seed: Number(process.env.SPOOL_WATCH_HANDOFF_SEED) }
    : {};

const VISUAL_SUMMARY =
  "<response>## Visual State at Boundary\nVISUAL-STATE of the screen.\n\n## Changes Observed\nSome.\n\n## Relevant Visual Patterns\nNone.\n\n## Next Thread\nKeep watching.</response>";

/** Two real JPEGs the frames alternate between. */
let images: Buffer[];
beforeAll(async () => {
  images = await Promise.all(
    [
      [200, 30, 30],
      [30, 30, 200],
    ].map(([r, g, b]) =>
      sharp({ create: { width: 64, height: 36, channels: 3, background: { r: r!, g: g!, b: b! } } })
        .jpeg()
        .toBuffer(),
    ),
  );
});

/**
 * The runtime's own estimator with calibration held at 1, so a step's estimated message tokens
 * show the images in it whatever usage the scripted model reports.
 */
function uncalibrated(): TokenEstimator {
  const real = createTokenEstimator({ catalogue: smallCatalogue() });
  return {
    count: (model, text) => real.count(model, text),
    raw: (model, input) => real.raw(model, input),
    estimate: (model, input) => Math.ceil(real.raw(model, input)),
    observe: () => undefined,
    replay: () => undefined,
    factor: () => 1,
    calibration: () => ({}),
  };
}

/** The options of a watching agent's runtime: the image summarizer is its summarizer. */
function watchingAgent(): Partial<AgentRuntimeOptions> {
  const summarizer = summarizerSpec(IMAGE_SUMMARIZER);
  const continuation = mergeCoordinationLayers([]).continuation;
  return {
    agent: longRunAgent(),
    estimator: uncalibrated(),
    agents: {
      get: (name) => (name === IMAGE_SUMMARIZER ? summarizer : undefined),
      names: () => [IMAGE_SUMMARIZER],
    },
    summarizerFor: (directive) =>
      selectSummarizer({
        directive: { name: directive },
        continuation,
        exists: (name) => name === IMAGE_SUMMARIZER,
        agentDefault: IMAGE_SUMMARIZER,
      }),
  };
}

/** Replays the log with no watch and no model: the notes come from each step's `context.feeds`. */
async function expectReplayIdentical(store: EventStore): Promise<void> {
  const report = await replayContinuity({
    source: store,
    continuity,
    stallMs: 5000,
    // The closed world: images are named by hash in the digest the answers are found by.
    makeRuntime: ({ store: target, world }) =>
      longRunRuntime(target, world.provider, { ...watchingAgent(), world }),
  });
  expect(report.difference).toBeUndefined();
  expect(report.identical).toBe(true);
}

/** Plays `history` on a fresh store; returns the log and the foreground requests in order. */
async function play(store: EventStore, history: WatchHistory) {
  const stored = await Promise.all(
    images.map((data) => store.artifacts.put(data, { mediaType: "image/jpeg" })),
  );
  const scripted = scriptedWatchModel();
  const watch = await StreamWatch.open({
    store,
    continuity,
    source: "screen",
    model: scripted.model,
    hooks: { noted: () => undefined, keep: () => undefined },
    settings: { ...DEFAULT_WATCH_SETTINGS, maxNoteEntries: history.maxNoteEntries },
    activity: () => ({ foregroundBusy: false }),
  });
  const runtimeWatch: RuntimeWatch = {
    notes: () => watch.notesText(),
    attach: async (_continuity, text) => {
      const latest = watch.latest?.frame;
      if (!isScreenQuestion(text) || !latest) return [];
      return [{ hash: latest.hash, size: latest.bytes, media_type: latest.mime, name: "screen" }];
    },
  };
  const requests: ProviderRequest[] = [];
  const runtime = longRunRuntime(
    store,
    routedProvider(
      watchForeground(history),
      scriptedSummarizer([VISUAL_SUMMARY]),
      (request, summary) => {
        if (!summary) requests.push(request);
      },
    ),
    { ...watchingAgent(), watch: runtimeWatch },
  );
  let at = Date.UTC(2026, 0, 1);
  let turns = 0;
  let frames = 0;
  for (const item of history.ops) {
    if (item.kind === "turn") {
      const result = await runtime.submit(continuity, {
        text: turnText(turns++, item),
        actor: "ada",
        origin: "test",
      });
      expect(result.status).toBe("completed");
    } else if (item.kind === "frame") {
      at += item.gapSeconds * 1000;
      scripted.state.repeatNext = item.repeat;
      scripted.state.commentNext = item.comment;
      const image = stored[frames++ % stored.length]!;
      await watch.offer(scoredFrame({ hash: image.hash, bytes: image.size }, at, item.score));
    } else {
      scripted.release();
      await watch.idle();
    }
  }
  scripted.release();
  await watch.idle();
  await runtime.close();
  const events: SpoolEvent[] = [];
  for await (const event of store.read({ continuity })) events.push(event);
  return { events, requests, stored };
}

/** Each notes block a step was given is the watch's fold, with every earlier note exactly once. */
function checkNotes(events: readonly SpoolEvent[]): number {
  let checked = 0;
  for (const feeds of events.filter((event) => isEvent(event, "context.feeds"))) {
    const before = events.filter((event) => event.seq < feeds.seq);
    const text = feeds.data.text;
    expect(text).toBe(renderWatchNotes(foldWatchEvents(before)));
    const tokens = noteTokens(text);
    for (const note of before.filter((event) => isEvent(event, "note.added"))) {
      const [token] = noteTokens(note.data.text);
      expect(
        tokens.filter((seen) => seen === token),
        `${token} in the notes of ${feeds.stream.id}`,
      ).toHaveLength(1);
    }
    checked += 1;
  }
  return checked;
}

/** The thread of each foreground request: requests and foreground compiles pair up in order. */
function threadsOf(events: readonly SpoolEvent[]): string[] {
  return events
    .filter((event) => isEvent(event, "context.compiled") && !event.stream.id.includes("@"))
    .map((event) => event.stream.id.slice(0, event.stream.id.lastIndexOf(":")));
}

/** The artifacts of a request's image parts (by hash, or by the bytes the edge read in). */
function imagesIn(request: ProviderRequest, byData: Map<string, string>): string[] {
  const found: string[] = [];
  for (const message of request.messages) {
    if (message.role !== "user" || typeof message.content === "string") continue;
    for (const part of message.content) {
      if (part.type !== "image") continue;
      found.push(part.artifact ?? byData.get(part.data) ?? `unknown:${part.data.slice(0, 20)}`);
    }
  }
  return found;
}

/** No image crosses a handoff: each request's images are those of turns its own thread ran. */
function checkImages(
  events: readonly SpoolEvent[],
  requests: readonly ProviderRequest[],
  byData: Map<string, string>,
): number {
  const attachments = new Map<string, string[]>();
  for (const event of events) {
    if (isEvent(event, "turn.added")) {
      attachments.set(
        event.id,
        (event.data.attachments ?? []).map((item) => item.hash),
      );
    }
  }
  const ran = new Map<string, Set<string>>();
  for (const event of events) {
    if (!isEvent(event, "run.started") || event.data.turn === undefined) continue;
    const own = ran.get(event.stream.id) ?? new Set<string>();
    for (const hash of attachments.get(event.data.turn) ?? []) own.add(hash);
    ran.set(event.stream.id, own);
  }
  const threads = threadsOf(events);
  const compiled = events.filter(
    (event) => isEvent(event, "context.compiled") && !event.stream.id.includes("@"),
  );
  expect(threads).toHaveLength(requests.length);
  let withImages = 0;
  requests.forEach((request, index) => {
    const found = imagesIn(request, byData);
    const own = ran.get(threads[index]!) ?? new Set<string>();
    for (const hash of found)
      expect(own.has(hash), `image ${hash} in ${threads[index]}`).toBe(true);
    if (found.length > 0) {
      withImages += 1;
      const data = compiled[index]!.data as EventData<"context.compiled">;
      expect(data.parts?.messages ?? 0).toBeGreaterThanOrEqual(IMAGE_TOKENS * found.length);
    }
  });
  return withImages;
}

/** After each handoff: the summary, the notes, no image in the seed or the first request. */
function checkContinuations(
  events: readonly SpoolEvent[],
  requests: readonly ProviderRequest[],
  byData: Map<string, string>,
): number {
  const threads = threadsOf(events);
  let handoffs = 0;
  for (const seeded of events.filter((event) => isEvent(event, "handoff.seeded"))) {
    handoffs += 1;
    const data = seeded.data as EventData<"handoff.seeded">;
    expect(data.summaries.at(-1)?.text).toContain("VISUAL-STATE of the screen.");
    expect(JSON.stringify(data.trailing)).not.toContain('"type":"image"');
    const first = threads.indexOf(seeded.stream.id);
    if (first === -1) continue; // the run ended at the handoff: no request in it yet
    const request = requests[first]!;
    const text = JSON.stringify(request);
    expect(text).toContain(HANDOFF_HEADING);
    expect(text).toContain("VISUAL-STATE of the screen.");
    const feeds = events.find(
      (event) => event.type === "context.feeds" && event.stream.id === `${seeded.stream.id}:0`,
    );
    if (feeds) {
      const notes = (feeds.data as EventData<"context.feeds">).text;
      expect(JSON.stringify(request.messages)).toContain(JSON.stringify(notes).slice(1, -1));
    }
    expect(imagesIn(request, byData)).toEqual([]);
  }
  return handoffs;
}

describe("nothing is lost at a handoff with a stream watch", () => {
  it("keeps the visual state and every note exactly once, and carries no image", async () => {
    let handedOff = 0;
    let compacted = 0;
    let pictured = 0;
    await fc.assert(
      fc.asyncProperty(watchHistoryArbitrary(), async (history) => {
        const temp = await tempStore("spool-watch-handoff-");
        try {
          const { events, requests, stored } = await play(temp.store, history);
          const byData = new Map(
            stored.map((info, index) => [images[index]!.toString("base64"), info.hash]),
          );
          checkNotes(events);
          if (checkImages(events, requests, byData) > 0) pictured += 1;
          if (checkContinuations(events, requests, byData) > 0) handedOff += 1;
          if (events.some((event) => isEvent(event, "notes.compacted"))) compacted += 1;
          expect((await checkHandoffCoverage(temp.store, continuity)).uncovered).toEqual([]);
          await expectReplayIdentical(temp.store);
        } finally {
          await temp.cleanup();
        }
      }),
      { numRuns: runs, endOnFailure: true, ...seed },
    );
    // The property is not vacuous: many histories handed off, compacted and showed
    // an image (about 9 in 10, 8 in 10 and all, measured over 60 runs).
    expect(handedOff).toBeGreaterThanOrEqual(runs / 3);
    expect(compacted).toBeGreaterThanOrEqual(runs / 3);
    expect(pictured).toBeGreaterThanOrEqual(runs / 3);
  }, 600_000);
});

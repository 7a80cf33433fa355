import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ContextMessage,
  messageToSeed,
  renderTranscript,
  type SeedMessageData,
  seedToMessage,
} from "../src/continuity/index.js";
import { openEventStore } from "../src/log/index.js";
import type { ProviderMessage, ToolResult } from "../src/providers/index.js";
import { EVENT_CATALOG } from "../src/spec/index.js";
import { tinyPng } from "./support/tiny-png.js";

// Images a tool returned (a screenshot) survive what copies and renders a thread's messages: the
// summarizer's transcript shows them as user images are shown, and a continuation's seed
// (`handoff.seeded`'s `trailing`) carries them both ways, through the schema and a real store.

type Image = NonNullable<ToolResult["images"]>[number];

const shot: Image = { type: "image", mediaType: "image/png", data: tinyPng() };
const seedSchema = EVENT_CATALOG["handoff.seeded"].schema;

const screenshotResults: ProviderMessage = {
  role: "tool",
  results: [
    { toolCallId: "call_1", name: "browser.screenshot", output: "Screenshot", images: [shot] },
    { toolCallId: "call_2", output: "tab closed", isError: true },
  ],
};

/** `handoff.seeded` data carrying `trailing`. */
const seeded = (trailing: SeedMessageData[]) => ({
  from: "t1",
  mode: "summary" as const,
  summaries: [],
  trailing,
  resume: true,
  tokens: { summary: 0, trailing: 10 },
});

describe("renderTranscript", () => {
  it("shows a tool result's images as [image], right after that result", () => {
    const text = renderTranscript([
      { role: "user", content: [{ type: "text", text: "Look." }, shot] },
      screenshotResults,
    ]);
    expect(text).toBe(`### User

Look.

[image]

### Tool results

[result of call_1: Screenshot]

[image]

[result of call_2 (error): tab closed]`);
    expect(text).not.toContain(shot.data);
  });

  it("shows one [image] per image, and a result with images and no output still shows them", () => {
    const text = renderTranscript([
      { role: "tool", results: [{ toolCallId: "call_9", output: "", images: [shot, shot] }] },
    ]);
    expect(text).toBe("### Tool results\n\n[result of call_9: ]\n\n[image]\n\n[image]");
  });
});

const image = fc.record({
  type: fc.constant("image" as const),
  mediaType: fc.constantFrom("image/png", "image/jpeg", "image/webp"),
  data: fc.base64String({ maxLength: 40 }),
});
const toolResult = fc.record(
  {
    toolCallId: fc.string({ minLength: 1, maxLength: 20 }),
    name: fc.string({ maxLength: 20 }),
    output: fc.string({ maxLength: 40 }),
    isError: fc.boolean(),
    images: fc.array(image, { maxLength: 3 }),
  },
  { requiredKeys: ["toolCallId", "output"] },
);
const toolEntry = fc.record({
  message: fc.record({
    role: fc.constant("tool" as const),
    results: fc.array(toolResult, { minLength: 1, maxLength: 4 }),
  }),
  seq: fc.nat(),
  turn: fc.constant(false),
  thread: fc.constant("t1"),
});

describe("the seed of a continuation", () => {
  it("carries tool results and their images both ways, valid for handoff.seeded", () => {
    fc.assert(
      fc.property(toolEntry, (entry: ContextMessage) => {
        const seed = messageToSeed(entry);
        const parsed = seedSchema.parse(seeded([seed]));
        expect(seedToMessage(parsed.trailing[0]!, "t1")).toEqual(entry);
      }),
    );
  });

  it("stores tool-result images as media_type and data, like a user's image", () => {
    const seed = messageToSeed({ message: screenshotResults, seq: 7, turn: false });
    expect(seed).toEqual({
      role: "tool",
      results: [
        {
          tool_call_id: "call_1",
          name: "browser.screenshot",
          output: "Screenshot",
          images: [{ type: "image", media_type: "image/png", data: shot.data }],
        },
        { tool_call_id: "call_2", output: "tab closed", is_error: true },
      ],
      seq: 7,
    });
  });

  it("still reads seeds written before tool results had images, and refuses a malformed image", () => {
    const old = { role: "tool", results: [{ tool_call_id: "call_1", output: "ok" }], seq: 3 };
    const parsed = seedSchema.parse(seeded([old as SeedMessageData]));
    expect(seedToMessage(parsed.trailing[0]!, "t0").message).toEqual({
      role: "tool",
      results: [{ toolCallId: "call_1", output: "ok" }],
    });
    const bad = {
      ...old,
      results: [{ tool_call_id: "call_1", output: "ok", images: [{ type: "image", data: "AA" }] }],
    };
    expect(seedSchema.safeParse(seeded([bad as SeedMessageData])).success).toBe(false);
  });

  it("a handoff.seeded with a screenshot result round-trips through a real SQLite store", async () => {
    const dir = mkdtempSync(join(tmpdir(), "spool-seed-images-"));
    const store = await openEventStore({ db: dir, durability: "strict" });
    try {
      const entry: ContextMessage = {
        message: screenshotResults,
        seq: 7,
        turn: false,
        thread: "t1",
      };
      await store.append({
        continuity: "c1",
        stream: { kind: "thread", id: "t2" },
        type: "handoff.seeded",
        data: seeded([messageToSeed(entry)]),
      });
      const events = [];
      for await (const event of store.read({ continuity: "c1" })) events.push(event);
      const data = events.find((event) => event.type === "handoff.seeded")!.data as {
        trailing: SeedMessageData[];
      };
      expect(seedToMessage(data.trailing[0]!, "t1")).toEqual(entry);
    } finally {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

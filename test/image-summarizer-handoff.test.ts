/**
 * The built-in image summarizer: it loads from the built-in tier with the four sections; an agent
 * with a `watch:` section gets it by default (a browser agent keeps browser_summarizer); and a
 * real handoff it summarizes seeds the continuation with its visual-state summary and no image
 * part, while another summarizer's handoff still carries them.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { assembleAgent } from "../src/app/index.js";
import {
  type ContextMessage,
  createSummaryWorker,
  handOff,
  IMAGE_NOT_CARRIED,
  type ThreadView,
} from "../src/continuity/index.js";
import { createItemSpace } from "../src/directives/index.js";
import { createScriptedProvider } from "../src/providers/index.js";
import { isEvent } from "../src/spec/index.js";
import { SMALL_MODEL } from "./support/continuity-run.js";
import { tinyPng } from "./support/tiny-png.js";
import { readAll, tempStore } from "./support/transcripts.js";

let temp: Awaited<ReturnType<typeof tempStore>>;
let workspace: string;

beforeEach(async () => {
  temp = await tempStore("spool-image-summarizer-");
  workspace = mkdtempSync(join(tmpdir(), "spool-image-summarizer-ws-"));
});
afterEach(async () => {
  await temp.cleanup();
  rmSync(workspace, { recursive: true, force: true });
});

function write(path: string, text: string): void {
  mkdirSync(dirname(join(workspace, path)), { recursive: true });
  writeFileSync(join(workspace, path), text);
}

const VISUAL_SUMMARY = [
  "## Visual State at Boundary",
  "Terraria, Duke Fishron at 43k HP; last frame 12:03:04.",
  "## Changes Observed",
  "- 11:40 lobby; 11:52 boss fight began.",
  "## Relevant Visual Patterns",
  "Tornado waves every 20 s.",
  "## Next Thread",
  "Tell the user when the boss is below 10k.",
].join("\n");

async function selected(agent: string) {
  const assembled = assembleAgent({
    workspace,
    home: workspace,
    store: temp.store,
    continuity: "watch",
    env: {},
    agent,
    provider: createScriptedProvider({ model: SMALL_MODEL, script: [] }),
    model: SMALL_MODEL,
  });
  try {
    return { choice: assembled.options.summarizerFor!("assistant"), watch: assembled.watch };
  } finally {
    await assembled.close();
  }
}

const image = {
  type: "image" as const,
  mediaType: "image/png",
  data: tinyPng(),
  width: 2,
  height: 2,
};

function view(): ThreadView {
  const messages: ContextMessage[] = [
    {
      seq: 10,
      turn: true,
      message: { role: "user", content: [{ type: "text", text: "what's on screen?" }, image] },
    },
    { seq: 11, turn: false, message: { role: "assistant", content: "A boss fight." } },
    { seq: 12, turn: true, message: { role: "user", content: "keep watching" } },
  ];
  return { thread: "t1", messages, newestTurn: 2, summaries: [], pinned: [] };
}

async function handoffWith(summarizer: string) {
  const worker = createSummaryWorker({
    store: temp.store,
    continuity: "watch",
    summarize: async () => VISUAL_SUMMARY,
    countTokens: (text) => Math.ceil(text.length / 4),
  });
  await handOff({
    store: temp.store,
    continuity: "watch",
    thread: "t1",
    directive: "assistant",
    model: SMALL_MODEL,
    view: view(),
    pressure: { tokensUsed: 7_000, maxTokens: 8_000, ratio: 0.875 },
    reason: "pressure",
    summarizer: { name: summarizer, maxSummaryTokens: 1_000 },
    ceiling: 16_000,
    attempt: 1,
    maxAttempts: 3,
    fits: true,
    nextStep: 3,
    worker,
    cost: () => 50,
    responseId: null,
  });
  const seeded = (await readAll(temp.store, "watch")).find((event) =>
    isEvent(event, "handoff.seeded"),
  );
  if (!seeded || !isEvent(seeded, "handoff.seeded")) throw new Error("no handoff.seeded");
  return seeded.data;
}

describe("the image summarizer", () => {
  it("loads from the built-in tier with the four sections", () => {
    const space = createItemSpace({ workspace, home: workspace, trustedKeys: new Map(), env: {} });
    const summarizer = space.directive("image_summarizer");
    expect(summarizer.source.tier).toBe("builtin");
    expect(summarizer.inputs.map((input) => input.name)).toContain("transcript_content");
    for (const section of [
      "## Visual State at Boundary",
      "## Changes Observed",
      "## Relevant Visual Patterns",
      "## Next Thread",
    ]) {
      expect(summarizer.body).toContain(section);
    }
  });

  it("is a watching agent's default summarizer, with its settings migrated", async () => {
    write(".ai/agents/watcher.yaml", "directive: assistant\nwatch: { directMaxEntries: 6 }\n");
    write(".ai/agents/plain.yaml", "directive: assistant\n");
    write(".ai/agents/both.yaml", "directive: assistant\nwatch: true\nbrowser: true\n");
    const watcher = await selected("watcher");
    expect(watcher.choice).toMatchObject({ name: "image_summarizer", source: "agent" });
    expect(watcher.watch?.settings.maxNoteEntries).toBe(6);
    expect(watcher.watch?.migrated).toEqual([
      { from: "directMaxEntries", to: "maxNoteEntries", note: "moved to maxNoteEntries" },
    ]);
    expect((await selected("plain")).choice).toMatchObject({ name: "thread_summary" });
    expect((await selected("both")).choice).toMatchObject({ name: "browser_summarizer" });
  });

  it("refuses a bad watch section with the setting and its range", async () => {
    write(".ai/agents/bad.yaml", "directive: assistant\nwatch: { changeThreshold: 2 }\n");
    await expect(selected("bad")).rejects.toThrow(
      /changeThreshold must be a number from 0.005 to 1/,
    );
  });

  it("seeds the continuation with the visual state and no image", async () => {
    const data = await handoffWith("image_summarizer");
    expect(data.summaries.at(-1)!.text).toContain("## Visual State at Boundary");
    const trailing = JSON.stringify(data.trailing);
    expect(trailing).not.toContain('"type":"image"');
    expect(trailing).toContain(IMAGE_NOT_CARRIED);
    expect(trailing).toContain("what's on screen?");
  });

  it("leaves another summarizer's continuation as it was (images carried)", async () => {
    const data = await handoffWith("thread_summary");
    expect(JSON.stringify(data.trailing)).toContain('"type":"image"');
  });
});

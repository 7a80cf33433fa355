/**
 * The stream watch end to end through the real OpenAI SDK against a loopback OpenAI-compatible
 * server: frames are real JPEGs made with sharp and stored as artifacts; the note-taker's request
 * carries the frame's bytes (read at the runtime's artifact edge) and the previous note; the
 * commentary's carries the frame and the notes; answers become the events; a server error is
 * `watch.failed` and the loop goes on.
 */
import sharp from "sharp";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createWatchModel,
  DEFAULT_WATCH_SETTINGS,
  type ScoredFrame,
  StreamWatch,
} from "../src/frames/index.js";
import { createOpenAIChatProvider } from "../src/providers/index.js";
import { withArtifactImages } from "../src/runtime/index.js";
import { isEvent, type SpoolEvent } from "../src/spec/index.js";
import { type LocalModelServer, startLocalModelServer } from "./support/local-model-server.js";
import { tempStore } from "./support/transcripts.js";

let temp: Awaited<ReturnType<typeof tempStore>>;
let server: LocalModelServer;
type Answer = { text: string; inputTokens: number } | { status: number; body: unknown };
/** The answers of the note model and of the commentary model, in order. */
let notes: Answer[];
let comments: Answer[];

beforeEach(async () => {
  temp = await tempStore("spool-watch-loopback-");
  notes = [];
  comments = [];
  server = await startLocalModelServer({
    kind: "plain",
    model: "vision-small",
    answer: (body) =>
      (body.includes("You take notes") ? notes.shift() : comments.shift()) ?? {
        text: "[SKIP]",
        inputTokens: 10,
      },
  });
});
afterEach(async () => {
  await server.close();
  await temp.cleanup();
});

/** A real 64×36 JPEG of one colour, stored as an artifact, as a scored frame at `seconds`. */
async function frame(
  seconds: number,
  rgb: [number, number, number],
  score: number,
): Promise<ScoredFrame> {
  const data = await sharp({
    create: { width: 64, height: 36, channels: 3, background: { r: rgb[0], g: rgb[1], b: rgb[2] } },
  })
    .jpeg()
    .toBuffer();
  const info = await temp.store.artifacts.put(data, { mediaType: "image/jpeg" });
  return {
    frame: {
      hash: info.hash,
      mime: "image/jpeg",
      bytes: data.length,
      width: 64,
      height: 36,
      at: seconds * 1000,
      source: "camera",
    },
    change: { score, ema: score, sceneCut: false, duplicate: false, forced: false },
  };
}

describe("the stream watch through a real SDK", () => {
  it("sends the frame's bytes and the notes, and logs what the models answered", async () => {
    const provider = withArtifactImages(
      createOpenAIChatProvider({
        apiKey: "sk-test",
        baseURL: server.baseURL,
        flavour: "vllm",
        env: {},
        transport: { maxAttempts: 1 },
      }),
      temp.store.artifacts,
    );
    const model = createWatchModel({
      note: { provider, model: "vision-small" },
      commentary: { provider, model: "vision-small" },
    });
    const watch = await StreamWatch.open({
      store: temp.store,
      continuity: "cam",
      source: "camera",
      model,
      hooks: { noted: () => undefined, keep: () => undefined },
      settings: { ...DEFAULT_WATCH_SETTINGS, autonomousCommentaryEnabled: false },
      activity: () => ({ foregroundBusy: false }),
      instructions: "You are a lab assistant.",
    });
    // The first frame: a note (commentary is off); then commentary is turned on, and the second
    // frame gets a note and the start commentary, which sees the first note; the third's note fails.
    notes.push({ text: "A red bench, empty.", inputTokens: 900 });
    await watch.offer(await frame(0, [200, 0, 0], 0.5));
    await watch.changeSettings({ autonomousCommentaryEnabled: true }, "cli");
    notes.push({ text: "A blue bench, a person arrives.", inputTokens: 900 });
    comments.push({ text: "Someone is at the bench. [[NOTE: person at bench]]", inputTokens: 950 });
    await watch.offer(await frame(3, [0, 0, 200], 0.5));
    notes.push({ status: 500, body: { error: { message: "overloaded" } } });
    await watch.offer(await frame(6, [0, 200, 0], 0.5));
    await watch.idle();

    const calls = server.requests.filter((r) => r.path.endsWith("/chat/completions"));
    const bodies = calls.map((call) => JSON.parse(call.body));
    const noteBodies = bodies.filter((body) => JSON.stringify(body).includes("You take notes"));
    const noteImage = noteBodies[0].messages[1].content[0].image_url.url as string;
    expect(noteImage).toMatch(/^data:image\/jpeg;base64,\/9j\//); // the JPEG's own bytes
    expect(noteBodies[0].messages[1].content[1].text).toBe("No previous note.");
    expect(noteBodies[1].messages[1].content[1].text).toBe("Previous note: A red bench, empty.");
    const comment = bodies.find((body) => JSON.stringify(body).includes("lab assistant"));
    expect(comment.messages[0].content).toContain("You are a lab assistant.");
    expect(comment.messages[1].content[0].image_url.url).toMatch(/^data:image\/jpeg;base64,/);
    expect(comment.messages[1].content[1].text).toContain("A red bench, empty.");

    const events: SpoolEvent[] = [];
    for await (const event of temp.store.read({ continuity: "cam" })) events.push(event);
    const types = events.map((event) => event.type);
    expect(types.filter((type) => type !== "note.added")).toEqual([
      "watch.settings-changed",
      "watch.started",
      "commentary.skipped",
      "watch.settings-changed",
      "commentary.added",
      "watch.failed",
    ]);
    expect(types.filter((type) => type === "note.added")).toHaveLength(3);
    const added = events.find((event) => isEvent(event, "commentary.added"));
    expect(added?.data).toMatchObject({
      text: "Someone is at the bench.",
      trigger: "start",
      model: "vision-small",
    });
    const failed = events.find((event) => isEvent(event, "watch.failed"));
    expect(failed?.data).toMatchObject({ call: "note", trigger: "change" });
    expect(JSON.stringify(events)).not.toContain("sk-test");
  });
});

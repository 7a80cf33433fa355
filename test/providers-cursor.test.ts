import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type EventStore, openEventStore } from "../src/log/index.js";
import {
  assembleMessage,
  type CursorCall,
  createOpenAIResponsesProvider,
  cursorRotatedEvent,
  type ProviderRequest,
  providerCursorProjection,
  type StreamPart,
  streamWithCursor,
  toMessageData,
} from "../src/providers/index.js";
import { collect } from "./support/events.js";
import { fixtureBytes, type ReplayServer, startReplayServer } from "./support/replay-server.js";

const continuity = "home";
const thread = "t1";
let server: ReplayServer;
let store: EventStore;
let dir: string;

beforeAll(async () => {
  server = await startReplayServer();
});
afterAll(async () => {
  await server.close();
});
beforeEach(async () => {
  server.requests.length = 0;
  dir = mkdtempSync(join(tmpdir(), "spool-cursor-"));
  store = await openEventStore({ db: dir });
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const provider = () =>
  createOpenAIResponsesProvider({
    apiKey: "sk-test-cursor-key-0123456789abcdef",
    baseURL: server.url,
    transport: { sleep: async () => {}, random: () => 0 },
  });

const STREAM = fixtureBytes("openai-responses/github-copilot-id-rotation.1.sse");
const NOT_FOUND = JSON.stringify({
  error: {
    message: "Previous response with id 'resp_old' not found.",
    type: "invalid_request_error",
    param: "previous_response_id",
    code: "previous_response_not_found",
  },
});

/** Logs a finished step of `thread` whose message carries `responseId`. */
async function logStep(index: number, parts: StreamPart[], providerName = "openai-responses") {
  const step = { kind: "step" as const, id: `${thread}:${index}` };
  await store.append({
    continuity,
    stream: step,
    type: "step.started",
    data: { kind: "model", thread, index, provider: providerName, model: "gpt-5" },
  });
  await store.append({
    continuity,
    stream: step,
    type: "message.completed",
    data: toMessageData(assembleMessage("openai-responses", parts), providerName),
  });
}

const fakeParts = (responseId: string): StreamPart[] => [
  { type: "start", responseId, model: "gpt-5" },
  { type: "text", block: 0, text: "earlier answer" },
  { type: "stop", reason: "end", providerReason: "completed" },
];

async function cursor() {
  const projection = providerCursorProjection(thread);
  return projection.cursor(await store.fold({ continuity }, projection));
}

function call(over: Partial<CursorCall>, rotations: unknown[]): CursorCall {
  const whole: ProviderRequest = {
    model: "gpt-5",
    messages: [
      { role: "user", content: "first question" },
      { role: "assistant", content: "earlier answer" },
      { role: "user", content: "again" },
    ],
  };
  return {
    cursor: null,
    newMessages: [{ role: "user", content: "again" }],
    settings: { model: "gpt-5" },
    rebuild: () => whole,
    onRotate: async (rotation) => {
      rotations.push(rotation);
      await store.append(cursorRotatedEvent(continuity, thread, rotation, `${thread}:1`));
    },
    ...over,
  };
}

describe("provider cursor", () => {
  it("is the newest Responses message of the thread, dropped by a rotation", async () => {
    expect(await cursor()).toBeNull();
    await logStep(0, fakeParts("resp_old"));
    expect(await cursor()).toEqual({
      responseId: "resp_old",
      provider: "openai-responses",
      step: "t1:0",
    });
    await store.append(
      cursorRotatedEvent(continuity, thread, {
        previousResponseId: "resp_old",
        reason: "expired",
        rebuiltMessages: 3,
      }),
    );
    expect(await cursor()).toBeNull();
  });

  it("continues from previous_response_id with only the new messages", async () => {
    await logStep(0, fakeParts("resp_old"));
    server.respond({ chunks: [STREAM] });
    const rotations: unknown[] = [];
    const parts = await collect(
      streamWithCursor(provider(), call({ cursor: await cursor() }, rotations)),
    );
    expect(parts.at(-1)?.type).toBe("stop");
    expect(rotations).toEqual([]);
    expect(server.requests).toHaveLength(1);
    const body = JSON.parse(server.requests[0]!.body);
    expect(body.previous_response_id).toBe("resp_old");
    expect(body.input).toHaveLength(1);
  });

  it("rebuilds the call from the log without the id when the provider no longer knows it, and logs the rotation", async () => {
    await logStep(0, fakeParts("resp_old"));
    server.respond(
      { status: 400, headers: { "content-type": "application/json" }, chunks: [NOT_FOUND] },
      { chunks: [STREAM] },
    );
    const rotations: unknown[] = [];
    const parts = await collect(
      streamWithCursor(provider(), call({ cursor: await cursor() }, rotations)),
    );
    expect(parts.some((part) => part.type === "error")).toBe(false);
    expect(parts.at(-1)?.type).toBe("stop");
    expect(rotations).toEqual([
      { previousResponseId: "resp_old", reason: "expired", rebuiltMessages: 3 },
    ]);
    const [first, second] = server.requests.map((request) => JSON.parse(request.body));
    expect(first.previous_response_id).toBe("resp_old");
    expect(second.previous_response_id).toBeUndefined();
    expect(second.input).toHaveLength(3);
    const rotated = [];
    for await (const event of store.read({ continuity, types: ["provider.cursor-rotated"] }))
      rotated.push(event);
    expect(rotated.map((event) => event.data)).toEqual([
      { previous_response_id: "resp_old", reason: "expired", step: "t1:1", rebuilt_messages: 3 },
    ]);
    // The new response becomes the cursor once its step is logged.
    const message = assembleMessage("openai-responses", parts);
    await logStep(1, parts);
    expect((await cursor())?.responseId).toBe(message.responseId);
  });

  it("rotates a cursor that another provider issued before calling", async () => {
    await logStep(0, fakeParts("resp_other"), "azure-responses");
    server.respond({ chunks: [STREAM] });
    const rotations: unknown[] = [];
    const parts = await collect(
      streamWithCursor(provider(), call({ cursor: await cursor() }, rotations)),
    );
    expect(parts.at(-1)?.type).toBe("stop");
    expect(rotations).toEqual([
      { previousResponseId: "resp_other", reason: "provider-changed", rebuiltMessages: 3 },
    ]);
    expect(server.requests).toHaveLength(1);
    expect(JSON.parse(server.requests[0]!.body).previous_response_id).toBeUndefined();
  });

  it("passes other failures of a continued call through unchanged", async () => {
    await logStep(0, fakeParts("resp_old"));
    server.respond({
      status: 401,
      headers: { "content-type": "application/json" },
      chunks: ['{"error":{"message":"bad key","type":"invalid_request_error"}}'],
    });
    const rotations: unknown[] = [];
    const parts = await collect(
      streamWithCursor(provider(), call({ cursor: await cursor() }, rotations)),
    );
    expect(parts).toEqual([
      expect.objectContaining({
        type: "error",
        error: expect.objectContaining({ code: "provider.auth" }),
      }),
    ]);
    expect(rotations).toEqual([]);
  });
});

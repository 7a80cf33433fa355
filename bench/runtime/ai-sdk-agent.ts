import { stepCountIs, streamText, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { splitTokens } from "../../src/providers/index.js";
import { LOOKUP_INPUT, lookupSchema, lookupTimed, type StepStamps } from "./step-stamps.js";

/**
 * A model stream part. `ai` does not export the type and `@ai-sdk/provider` is not a direct
 * dependency, so it is derived from the mock, as `bench/protocol/ai-sdk-comparison.ts` does.
 */
type StreamPart =
  Awaited<ReturnType<MockLanguageModelV3["doStream"]>>["stream"] extends ReadableStream<infer P>
    ? P
    : never;

const USAGE = {
  inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 },
};

/**
 * The parts of step `index` of `toolSteps` + 1: a `lookup` call (input JSON in 8-character
 * deltas, as the scripted provider streams native calls) and `tool-calls`, or the final text.
 */
function stepParts(index: number, toolSteps: number): StreamPart[] {
  if (index >= toolSteps) {
    return [
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "t1" },
      { type: "text-delta", id: "t1", delta: "done" },
      { type: "text-end", id: "t1" },
      { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage: USAGE },
    ];
  }
  const id = `call_${index}`;
  const input = JSON.stringify(LOOKUP_INPUT);
  return [
    { type: "stream-start", warnings: [] },
    { type: "tool-input-start", id, toolName: "lookup" },
    ...splitTokens(input, 8).map((delta): StreamPart => ({ type: "tool-input-delta", id, delta })),
    { type: "tool-input-end", id },
    { type: "tool-call", toolCallId: id, toolName: "lookup", input },
    { type: "finish", finishReason: { unified: "tool-calls", raw: "tool_calls" }, usage: USAGE },
  ];
}

/**
 * A stream of `parts` read on demand (high-water mark 0: a part is made only when the reader
 * asks, as an async generator does), stamping the `tool-call` part just before it is handed on.
 */
function onDemand(parts: readonly StreamPart[], stamps: StepStamps): ReadableStream<StreamPart> {
  let next = 0;
  return new ReadableStream<StreamPart>(
    {
      pull(controller) {
        const part = parts[next++];
        if (part === undefined) {
          controller.close();
          return;
        }
        if (part.type === "tool-call") stamps.closes.push(performance.now());
        controller.enqueue(part);
      },
    },
    { highWaterMark: 0 },
  );
}

/** The AI SDK's `lookup`: the same schema and timed body as Spool's. */
const sdkLookup = (stamps: StepStamps) =>
  tool({
    description: "Looks a city up.",
    inputSchema: lookupSchema,
    execute: (input) => lookupTimed(input, stamps),
  });

/**
 * Runs a multi-step agent with the Vercel AI SDK: `streamText` with an executing `lookup` tool
 * and `stopWhen: stepCountIs(toolSteps + 1)` over a mock model that calls the tool `toolSteps`
 * times, one call a step, then answers. Stamps every model call (`doStream` entered), tool
 * call close and `execute` into `stamps`; reads the whole `fullStream`.
 */
export async function runAiSdkAgent(toolSteps: number, stamps: StepStamps): Promise<void> {
  let index = 0;
  const model = new MockLanguageModelV3({
    doStream: async () => {
      stamps.calls.push(performance.now());
      return { stream: onDemand(stepParts(index++, toolSteps), stamps) };
    },
  });
  const result = streamText({
    model,
    prompt: "Look Oslo up, again and again.",
    tools: { lookup: sdkLookup(stamps) },
    stopWhen: stepCountIs(toolSteps + 1),
  });
  let results = 0;
  for await (const part of result.fullStream) {
    if (part.type === "tool-result") results += 1;
    if (part.type === "error") throw part.error;
  }
  if (results !== toolSteps) {
    throw new Error(`the AI SDK ran the tool ${results} times for ${toolSteps} steps`);
  }
}

import { expect } from "vitest";
import { z } from "zod";
import { type AnyTool, defineTool } from "../../src/actions/index.js";
import type { EventStore } from "../../src/log/index.js";
import { type ReplayReport, replayContinuity } from "../../src/replay/index.js";
import { type AgentSpec, createAgentRuntime } from "../../src/runtime/index.js";
import type { SpoolEvent } from "../../src/spec/index.js";
import type { ReceivedRequest } from "./replay-server.js";
import { fixtureBytes } from "./replay-server.js";

// Helpers of the end-to-end runtime tests: recorded provider streams read through the real SDKs,
// a runtime around them, and replay of what they logged. Expectations are computed from the
// fixtures' own `data:` lines, apart from the adapters' code.

/** A tool that records every input it is called with and answers with `answer(input)`. */
export interface RecordingTool {
  tool: AnyTool;
  calls: Record<string, unknown>[];
}

/** A tool named `name` taking any object (the recorded input decides what it gets). */
export function recordingTool(
  name: string,
  answer: (input: Record<string, unknown>) => unknown = (input) => ({ ok: true, input }),
): RecordingTool {
  const calls: Record<string, unknown>[] = [];
  const tool = defineTool({
    name,
    description: `Test tool ${name}: records its calls.`,
    parameters: z.object({}).passthrough(),
    execute: (input) => {
      calls.push(input);
      return answer(input);
    },
  });
  return { tool, calls };
}

/** The directive every test runs: no limits but a turn cap, every action permitted. */
export function agentSpec(model: string, tools: readonly AnyTool[]): AgentSpec {
  return {
    directive: "e2e",
    instructions: "Answer the user; use the tools when they help.",
    model,
    limits: { maxTurns: 8 },
    permits: () => true,
    tools,
  };
}

/** Replays `continuity` of `source` with a runtime built from `agent` (the one that wrote it). */
export function replay(
  source: EventStore,
  continuity: string,
  agent: AgentSpec,
): Promise<ReplayReport> {
  return replayContinuity({
    source,
    continuity,
    stallMs: 5000,
    makeRuntime: ({ store, world }) =>
      createAgentRuntime({ store, provider: world.provider, agent, world }),
  });
}

/** The JSON payloads of a fixture's `data:` lines (`[DONE]` left out). */
export function dataLines(path: string): Record<string, unknown>[] {
  return fixtureBytes(path)
    .toString("utf8")
    .split(/\r?\n/)
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice(5).trim())
    .filter((payload) => payload !== "[DONE]" && payload !== "")
    .map((payload) => JSON.parse(payload) as Record<string, unknown>);
}

type Json = Record<string, unknown>;
const obj = (value: unknown): Json => (value ?? {}) as Json;

/** The text an Anthropic stream's `text_delta`s spell. */
export function anthropicText(path: string): string {
  return dataLines(path)
    .filter((data) => data.type === "content_block_delta")
    .map((data) => obj(data.delta))
    .filter((delta) => delta.type === "text_delta")
    .map((delta) => String(delta.text))
    .join("");
}

/** The `thinking` text and `signature` of block `index` of an Anthropic stream. */
export function anthropicThinking(path: string): { text: string; signature: string } {
  let text = "";
  let signature = "";
  for (const data of dataLines(path)) {
    if (data.type !== "content_block_delta") continue;
    const delta = obj(data.delta);
    if (delta.type === "thinking_delta") text += String(delta.thinking);
    if (delta.type === "signature_delta") signature += String(delta.signature);
  }
  return { text, signature };
}

/**
 * The tool calls of an Anthropic stream: id, name and the input its `partial_json`s spell (with
 * `partial`, an input that does not parse is left as its text).
 */
export function anthropicToolCalls(
  path: string,
  options: { partial?: boolean } = {},
): { id: string; name: string; input: unknown }[] {
  const calls = new Map<number, { id: string; name: string; json: string }>();
  for (const data of dataLines(path)) {
    const block = obj(data.content_block);
    if (data.type === "content_block_start" && block.type === "tool_use") {
      calls.set(Number(data.index), { id: String(block.id), name: String(block.name), json: "" });
    }
    const delta = obj(data.delta);
    const call = calls.get(Number(data.index));
    if (data.type === "content_block_delta" && delta.type === "input_json_delta" && call) {
      call.json += String(delta.partial_json);
    }
  }
  const parse = (json: string): unknown => {
    if (json === "") return {};
    try {
      return JSON.parse(json);
    } catch (error) {
      if (options.partial) return json;
      throw error;
    }
  };
  return [...calls.values()].map(({ id, name, json }) => ({ id, name, input: parse(json) }));
}

/** The `content` (and `reasoning_content`) a Chat Completions stream's deltas spell. */
export function chatText(path: string): { content: string; reasoning: string } {
  let content = "";
  let reasoning = "";
  for (const data of dataLines(path)) {
    for (const choice of (data.choices ?? []) as Json[]) {
      const delta = obj(choice.delta);
      if (typeof delta.content === "string") content += delta.content;
      if (typeof delta.reasoning_content === "string") reasoning += delta.reasoning_content;
    }
  }
  return { content, reasoning };
}

/** The tool calls of a Chat Completions stream, by index: id, name, and parsed arguments. */
export function chatToolCalls(path: string): { id: string; name: string; input: unknown }[] {
  const calls = new Map<number, { id: string; name: string; args: string }>();
  for (const data of dataLines(path)) {
    for (const choice of (data.choices ?? []) as Json[]) {
      for (const call of (obj(choice.delta).tool_calls ?? []) as Json[]) {
        const index = typeof call.index === "number" ? call.index : calls.size;
        const fn = obj(call.function);
        const known = calls.get(index) ?? { id: "", name: "", args: "" };
        if (typeof call.id === "string") known.id = call.id;
        if (typeof fn.name === "string") known.name = fn.name;
        if (typeof fn.arguments === "string") known.args += fn.arguments;
        calls.set(index, known);
      }
    }
  }
  return [...calls.values()].map(({ id, name, args }) => ({
    id,
    name,
    input: args.trim() === "" ? {} : JSON.parse(args),
  }));
}

/** The `output_item.done` items of a Responses stream, in order. */
export function responsesItems(path: string): Json[] {
  return dataLines(path)
    .filter((data) => data.type === "response.output_item.done")
    .map((data) => obj(data.item));
}

/** The output text of a Responses stream's message items. */
export function responsesText(path: string): string {
  return responsesItems(path)
    .filter((item) => item.type === "message")
    .flatMap((item) => (item.content ?? []) as Json[])
    .filter((part) => part.type === "output_text")
    .map((part) => String(part.text))
    .join("");
}

/** The events of `type` in a log. */
export function ofType(events: readonly SpoolEvent[], type: string): SpoolEvent[] {
  return events.filter((event) => event.type === type);
}

/** The `data` of an event as a plain record (for field checks without the catalogue's types). */
export function dataOf(event: SpoolEvent | undefined): Json {
  return obj(event?.data);
}

/** The loop's decisions in the log, in order. */
export const decisions = (events: readonly SpoolEvent[]) =>
  ofType(events, "loop.decided").map((event) => dataOf(event).decision);

/**
 * The lifecycle of a completed tool-calling run: a `message.completed` per step, each native call
 * dispatched with its recorded input and succeeded, `continue` until the last step's `complete`.
 */
export function expectToolRun(
  events: readonly SpoolEvent[],
  thread: string,
  steps: number,
  calls: { id: string; name: string; input: unknown }[],
) {
  const completed = ofType(events, "message.completed");
  expect(completed.map((event) => event.stream.id)).toEqual(
    Array.from({ length: steps }, (_, index) => `${thread}:${index}`),
  );
  const dispatched = ofType(events, "action.dispatched").map(dataOf);
  expect(dispatched.map((data) => [data.action_id, data.type, data.name, data.parameters])).toEqual(
    calls.map((call) => [call.id, "tool", call.name, call.input]),
  );
  expect(ofType(events, "action.succeeded").map((event) => dataOf(event).action_id)).toEqual(
    calls.map((call) => call.id),
  );
  expect(ofType(events, "action.failed")).toEqual([]);
  expect(decisions(events)).toEqual([...Array(steps - 1).fill("continue"), "complete"]);
  const runs = ofType(events, "run.completed");
  expect(runs).toHaveLength(1);
  expect(dataOf(runs[0])).toMatchObject({ status: "completed", steps });
}

/** The key reached the server (so the check below can fail) and no event of the log holds it. */
export function expectKeyNeverLogged(
  requests: readonly ReceivedRequest[],
  events: readonly SpoolEvent[],
  key: string,
) {
  const sent = requests.some((request) => JSON.stringify(request.headers).includes(key));
  expect(sent, "the SDK sent the key to the server").toBe(true);
  for (const event of events) {
    expect(JSON.stringify(event), `${event.type} #${event.seq} holds the API key`).not.toContain(
      key,
    );
  }
}

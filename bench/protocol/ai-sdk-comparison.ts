import { simulateReadableStream, streamText, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { z } from "zod";
import {
  createMemoryActionLog,
  createToolExecutor,
  createToolRegistry,
  createVariableStore,
  defineTool,
  runStep,
} from "../../src/actions/index.js";
import type { EngineSection, ResultRow } from "../report.js";
import { median } from "../stats.js";

/** Output tokens of the response after the tool call; the thought before it is ~150 tokens. */
const RESPONSE_TOKENS = 4000;

/** A model stream part (the provider package is not a direct dependency: derived from `ai`). */
type LanguageModelV3StreamPart =
  Awaited<ReturnType<MockLanguageModelV3["doStream"]>>["stream"] extends ReadableStream<infer P>
    ? P
    : never;
const THOUGHT_TOKENS = 150;
/** Whole streams per run for the CPU measure, after warm-up ones. */
const CPU_STREAMS = 12;
const WARMUP_STREAMS = 3;
/** The paced stream: a batch of tokens every `PACE_MS`, so it lasts about 1.5 s. */
const PACE_MS = 5;

const WORDS =
  "the model keeps talking while the tool runs so we compare when each runtime acts on a call and how much work every token costs".split(
    " ",
  );

/** ~4-character tokens of `text`, as a tokenizer would roughly cut it. */
function tokenize(text: string): string[] {
  const tokens: string[] = [];
  for (let i = 0; i < text.length; i += 4) tokens.push(text.slice(i, i + 4));
  return tokens;
}

function prose(tokens: number, seed: number): string {
  const words: string[] = [];
  let chars = 0;
  for (let i = 0; chars < tokens * 4; i++) {
    const word = WORDS[(i * 7 + seed) % WORDS.length]!;
    words.push(i % 17 === 16 ? `${word}.\n` : word);
    chars += word.length + 1;
  }
  return words.join(" ").slice(0, tokens * 4);
}

const ARGS = { city: "Oslo" };

/** The same model output in both forms: Spool's tagged text, and AI SDK stream parts. */
interface Workload {
  /** Spool: the tagged output, as token chunks. */
  spool: string[];
  /** Index of the chunk that completes `</action>`. */
  spoolToolEnd: number;
  /** AI SDK: stream parts with one part per token. */
  parts: LanguageModelV3StreamPart[];
  /** Index of the `tool-call` part (the call's last part). */
  partsToolEnd: number;
  tokens: number;
}

function workload(): Workload {
  const thought = prose(THOUGHT_TOKENS, 1);
  const response = prose(RESPONSE_TOKENS, 2);
  const argsJson = JSON.stringify(ARGS);
  const head = tokenize(`<thought>${thought}`);
  const action = tokenize(
    `<action type="tool" mode="async" id="call_1">${JSON.stringify({ name: "lookup", parameters: ARGS })}</action>`,
  );
  const tail = tokenize(`</thought><response>${response}</response>`);
  const spool = [...head, ...action, ...tail];
  const parts: LanguageModelV3StreamPart[] = [
    { type: "stream-start", warnings: [] },
    { type: "reasoning-start", id: "r1" },
    ...tokenize(thought).map(
      (delta): LanguageModelV3StreamPart => ({ type: "reasoning-delta", id: "r1", delta }),
    ),
    { type: "reasoning-end", id: "r1" },
    { type: "tool-input-start", id: "call_1", toolName: "lookup" },
    ...tokenize(argsJson).map(
      (delta): LanguageModelV3StreamPart => ({ type: "tool-input-delta", id: "call_1", delta }),
    ),
    { type: "tool-input-end", id: "call_1" },
    { type: "tool-call", toolCallId: "call_1", toolName: "lookup", input: argsJson },
  ];
  const partsToolEnd = parts.length - 1;
  parts.push(
    { type: "text-start", id: "t1" },
    ...tokenize(response).map(
      (delta): LanguageModelV3StreamPart => ({ type: "text-delta", id: "t1", delta }),
    ),
    { type: "text-end", id: "t1" },
    {
      type: "finish",
      finishReason: { unified: "tool-calls", raw: "tool_calls" },
      usage: {
        inputTokens: { total: 100, noCache: 100, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: spool.length, text: spool.length, reasoning: 0 },
      },
    },
  );
  return {
    spool,
    spoolToolEnd: head.length + action.length - 1,
    parts,
    partsToolEnd,
    tokens: spool.length,
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** True at the token indexes where a paced stream pauses `PACE_MS` (every `perBatch` tokens). */
function paced(perBatch: number): (index: number) => boolean {
  return (index) => index > 0 && index % perBatch === 0;
}

/** Called by both sides' tool; each run sets it. Tools are defined once, as an agent would. */
let toolCalled: () => void = () => {};

const spoolTools = createToolExecutor(
  createToolRegistry([
    defineTool({
      name: "lookup",
      description: "Looks a city up.",
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => {
        toolCalled();
        return { city, population: 709_000 };
      },
    }),
  ]),
);

const sdkTools = {
  lookup: tool({
    description: "Looks a city up.",
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      toolCalled();
      return { city, population: 709_000 };
    },
  }),
};

/** Runs the Spool side once; `onTool` is called by the tool, `pace` delays between chunks. */
async function runSpool(
  load: Workload,
  onTool: () => void,
  pace?: { batch: number; onToolEnd: () => void },
): Promise<void> {
  toolCalled = onTool;
  async function* output(): AsyncIterable<string> {
    const boundary = pace ? paced(pace.batch) : undefined;
    for (let i = 0; i < load.spool.length; i++) {
      if (boundary?.(i)) await sleep(PACE_MS);
      if (i === load.spoolToolEnd) pace?.onToolEnd();
      yield load.spool[i]!;
    }
  }
  const run = runStep({
    output: output(),
    log: createMemoryActionLog(),
    variables: createVariableStore(),
    executors: [spoolTools],
  });
  let ended = false;
  for await (const event of run) if (event.type === "step-end") ended = true;
  if (!ended) throw new Error("the Spool step did not end normally");
}

/** Runs the AI SDK side once, through `streamText` with a mock model. */
async function runAiSdk(
  load: Workload,
  onTool: () => void,
  pace?: { batch: number; onToolEnd: () => void },
): Promise<void> {
  let stream: ReadableStream<LanguageModelV3StreamPart>;
  if (pace) {
    let index = 0;
    const boundary = paced(pace.batch);
    stream = new ReadableStream({
      async pull(controller) {
        if (index >= load.parts.length) {
          controller.close();
          return;
        }
        if (boundary(index)) await sleep(PACE_MS);
        if (index === load.partsToolEnd) pace.onToolEnd();
        controller.enqueue(load.parts[index]!);
        index += 1;
      },
    });
  } else {
    stream = simulateReadableStream({
      chunks: load.parts,
      chunkDelayInMs: null,
      initialDelayInMs: null,
    });
  }
  toolCalled = onTool;
  const result = streamText({
    model: new MockLanguageModelV3({ doStream: async () => ({ stream }) }),
    prompt: "Look Oslo up.",
    tools: sdkTools,
  });
  let toolResult = false;
  for await (const part of result.fullStream) if (part.type === "tool-result") toolResult = true;
  if (!toolResult) throw new Error("the AI SDK never ran the tool");
}

type Runner = typeof runSpool;

/** CPU microseconds (user + system) of `streams` whole streams through `runner`. */
async function cpuOf(runner: Runner, load: Workload, streams: number): Promise<number> {
  let called = 0;
  const before = process.cpuUsage();
  for (let i = 0; i < streams; i++) await runner(load, () => called++);
  const used = process.cpuUsage(before);
  if (called !== streams) throw new Error(`the tool ran ${called} times for ${streams} streams`);
  return used.user + used.system;
}

/** Milliseconds from delivering the tool call's last chunk to the tool's `execute`, paced. */
async function toolDelay(runner: Runner, load: Workload, batch: number): Promise<number> {
  let endAt = Number.NaN;
  let calledAt = Number.NaN;
  await runner(load, () => (calledAt = performance.now()), {
    batch,
    onToolEnd: () => (endAt = performance.now()),
  });
  return calledAt - endAt;
}

/**
 * Spool's step runner against the Vercel AI SDK v6 (`streamText` over `MockLanguageModelV3`) on
 * the same tool-calling output: CPU per token (reported as tokens per CPU-second, target ≥ 3×
 * the AI SDK), and, on a paced stream of about 1.5 s, the delay from the tool call's last chunk
 * to the tool's `execute`.
 */
export async function measureAiSdkComparison(
  runs: number,
  progress: (line: string) => void,
): Promise<EngineSection> {
  const load = workload();
  const spoolRates: number[] = [];
  const sdkRates: number[] = [];
  const spoolDelays: number[] = [];
  const sdkDelays: number[] = [];
  for (let i = 0; i < WARMUP_STREAMS; i++) {
    await runSpool(load, () => {});
    await runAiSdk(load, () => {});
  }
  const spoolBatch = Math.ceil(load.spool.length / 300);
  const sdkBatch = Math.ceil(load.parts.length / 300);
  for (let run = 0; run < runs; run++) {
    progress(`ai-sdk comparison: CPU per token, run ${run + 1}/${runs}`);
    // Interleaved halves, so drift in the machine's load hits both sides alike.
    let spoolCpu = 0;
    let sdkCpu = 0;
    for (let half = 0; half < 2; half++) {
      spoolCpu += await cpuOf(runSpool, load, CPU_STREAMS / 2);
      sdkCpu += await cpuOf(runAiSdk, load, CPU_STREAMS / 2);
    }
    spoolRates.push((load.tokens * CPU_STREAMS) / (spoolCpu / 1e6));
    sdkRates.push((load.parts.length * CPU_STREAMS) / (sdkCpu / 1e6));
    progress(`ai-sdk comparison: paced stream, run ${run + 1}/${runs}`);
    spoolDelays.push(await toolDelay(runSpool, load, spoolBatch));
    sdkDelays.push(await toolDelay(runAiSdk, load, sdkBatch));
  }
  const rows: ResultRow[] = [
    {
      measure: `CPU per token, ${load.tokens.toLocaleString("en-US")}-token output with one tool call`,
      unit: "tokens/s",
      spool: median(spoolRates),
      ceiling: median(sdkRates),
      target: { minRatio: 3 },
    },
    {
      measure: "tool call's last chunk → tool execute, paced ~1.5 s stream",
      unit: "ms",
      spool: median(spoolDelays),
      ceiling: median(sdkDelays),
    },
  ];
  return {
    title: "Tool calling: Spool step runner vs Vercel AI SDK",
    engine: "ai v6 streamText + MockLanguageModelV3",
    baseline: "AI SDK",
    rows,
    notes: [
      `the same output both ways: a ~${THOUGHT_TOKENS}-token thought (AI SDK: reasoning deltas), one lookup tool call (Spool: an async <action>; AI SDK: tool-input deltas and a tool-call part), then a ~${RESPONSE_TOKENS}-token response; ~4-character tokens, one chunk or part per token`,
      `CPU: process.cpuUsage over ${CPU_STREAMS} whole streams per run (interleaved halves, after ${WARMUP_STREAMS} warm-ups), as tokens (Spool) or stream parts (AI SDK) per CPU-second; Spool consumes every step event (parser, scheduler with its in-memory log validating each event, tool with zod, $ substitution of the response), the AI SDK its fullStream`,
      `delay: tokens arrive in ~300 batches ${PACE_MS} ms apart; the AI SDK runs tools only after the stream's finish part, Spool when </action> arrives`,
    ],
  };
}

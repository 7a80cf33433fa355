/**
 * Random histories for the handoff property tests: turns of any length, each answered by steps
 * that call tools natively or through protocol actions (small or large outputs), give non-final
 * responses, or cross 0.8 and 0.9 of the window at once (a reported usage), with pins added between
 * turns. A case becomes a scripted foreground provider, a tool, and the turns to submit.
 */
import fc from "fast-check";
import { z } from "zod";
import { defineTool } from "../../src/actions/index.js";
import type { EventStore } from "../../src/log/index.js";
import { createScriptedProvider, type ScriptedTurn } from "../../src/providers/index.js";
import type { AgentRuntime } from "../../src/runtime/index.js";
import { filler, SMALL_MODEL } from "./continuity-run.js";

/** How a step reports its input: as the request's size, or a share of the 8k window. */
export type StepUsage = "natural" | "crosses-0.8" | "crosses-both";

/** One model call of a generated history. */
export type StepCase =
  | { kind: "nonfinal"; words: number; usage: StepUsage }
  | { kind: "native"; words: number; outputWords: number; usage: StepUsage }
  | { kind: "action"; outputWords: number; usage: StepUsage };

/** One user turn: its text's length, a pin added before it, its steps before the final answer. */
export interface TurnCase {
  words: number;
  pin: boolean;
  steps: StepCase[];
  finalWords: number;
}

const usage = fc.constantFrom<StepUsage>("natural", "natural", "crosses-0.8", "crosses-both");
/** Tool outputs: mostly small, some large (up to about a third of the window). */
const outputWords = fc.oneof(
  { weight: 3, arbitrary: fc.integer({ min: 1, max: 80 }) },
  { weight: 1, arbitrary: fc.integer({ min: 300, max: 900 }) },
);
const step: fc.Arbitrary<StepCase> = fc.oneof(
  fc.record({
    kind: fc.constant("nonfinal" as const),
    words: fc.integer({ min: 1, max: 120 }),
    usage,
  }),
  fc.record({
    kind: fc.constant("native" as const),
    words: fc.integer({ min: 0, max: 60 }),
    outputWords,
    usage,
  }),
  fc.record({ kind: fc.constant("action" as const), outputWords, usage }),
);

/** A history of `minTurns`..`maxTurns` turns. */
export function historyArbitrary(minTurns = 4, maxTurns = 12): fc.Arbitrary<TurnCase[]> {
  return fc.array(
    fc.record({
      words: fc.integer({ min: 3, max: 500 }),
      pin: fc.boolean(),
      steps: fc.array(step, { maxLength: 3 }),
      finalWords: fc.integer({ min: 1, max: 60 }),
    }),
    { minLength: minTurns, maxLength: maxTurns },
  );
}

const WINDOW = 8192;
const reported = (kind: StepUsage) =>
  kind === "natural"
    ? {}
    : { usage: { inputTokens: Math.round(WINDOW * (kind === "crosses-both" ? 0.95 : 0.85)) } };

/** The tool the generated steps call: it answers `RESULT-<word>` and `size` filler words. */
export const lookupTool = defineTool({
  name: "lookup",
  description: "Looks a word up.",
  parameters: z.object({ word: z.string(), size: z.number().int().nonnegative() }),
  idempotent: true,
  execute: ({ word, size }) => `RESULT-${word} ${size > 0 ? filler(0, size) : ""}`.trim(),
});

/** The scripted foreground answers of a history, in the order the runtime asks for them. */
export function foregroundScript(turns: readonly TurnCase[]): ScriptedTurn[] {
  const script: ScriptedTurn[] = [];
  let call = 0;
  turns.forEach((turn, index) => {
    for (const item of turn.steps) {
      call += 1;
      const tag = `S${call}`;
      switch (item.kind) {
        case "nonfinal":
          script.push({
            text: `<response final="false">PROGRESS-${tag} ${filler(call, item.words)}</response>`,
            ...reported(item.usage),
          });
          break;
        case "native":
          script.push({
            ...(item.words > 0 ? { text: `ASKING-${tag} ${filler(call, item.words)}` } : {}),
            toolCalls: [
              { id: `toolu_${tag}`, name: "lookup", input: { word: tag, size: item.outputWords } },
            ],
            stopReason: "tool-use",
            ...reported(item.usage),
          });
          break;
        case "action":
          script.push({
            text: `<action type="tool" mode="sync" id="a${call}">{"name":"lookup","parameters":{"word":"${tag}","size":${item.outputWords}}}</action>`,
            ...reported(item.usage),
          });
          break;
      }
    }
    call += 1;
    script.push(`<response>ANSWER-${index + 1} ${filler(call, turn.finalWords)}</response>`);
  });
  return script;
}

/** The foreground provider of a history (it starts again from the top if a crash made it skip). */
export function historyProvider(turns: readonly TurnCase[]) {
  return createScriptedProvider({
    model: SMALL_MODEL,
    loop: true,
    script: foregroundScript(turns),
  });
}

/** Submits turns `from`.. of a history (a pin first where the case has one). */
export async function submitTurns(
  runtime: AgentRuntime,
  store: EventStore,
  continuity: string,
  turns: readonly TurnCase[],
  from = 0,
  stop?: Promise<unknown>,
): Promise<number> {
  for (let index = from; index < turns.length; index++) {
    const turn = turns[index]!;
    if (turn.pin) {
      await store.append({
        continuity,
        type: "context.pinned",
        data: { id: `pin-${index}`, kind: "fact", text: `PIN-${index}`, by: "user" },
      });
    }
    const run = runtime.submit(continuity, {
      text: `TURN-${index + 1} ${filler(index + 1, turn.words)}`,
      actor: "ada",
      origin: "test",
    });
    const died = stop?.then(() => "died" as const);
    const outcome = await (died === undefined ? run : Promise.race([run, died]));
    if (outcome === "died") return index + 1;
  }
  return turns.length;
}

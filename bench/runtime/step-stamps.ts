import { z } from "zod";
import type { ProviderStamps } from "./stamped-provider.js";

/** Stamps of one agent run: the model's (calls, tool call closes) and the tool's. */
export interface StepStamps extends ProviderStamps {
  /** When the tool's `execute` was entered. */
  executeStarts: number[];
  /** When the tool's `execute` returned. */
  executeEnds: number[];
}

/** Fresh, empty stamps. */
export function newStamps(): StepStamps {
  return { calls: [], closes: [], executeStarts: [], executeEnds: [] };
}

/** The `lookup` tool's input every step sends. */
export const LOOKUP_INPUT = { city: "Oslo" };

/** The `lookup` tool's parameters, the same schema on both sides. */
export const lookupSchema = z.object({ city: z.string() });

/** The `lookup` tool's body: returns at once, stamping its entry and its return. */
export function lookupTimed(
  input: z.output<typeof lookupSchema>,
  stamps: StepStamps,
): { city: string; population: number } {
  stamps.executeStarts.push(performance.now());
  const result = { city: input.city, population: 709_000 };
  stamps.executeEnds.push(performance.now());
  return result;
}

/**
 * The two latencies of each tool step (ms): (a) the call's close in the model stream → the
 * tool's `execute` entered; (b) `execute` returned → the next model call. Throws unless there
 * is exactly one close and one `execute` per tool step and one model call more than those.
 */
export function stepLatencies(
  stamps: StepStamps,
  toolSteps: number,
): { toExecute: number[]; toNextCall: number[] } {
  const { calls, closes, executeStarts, executeEnds } = stamps;
  if (
    closes.length !== toolSteps ||
    executeStarts.length !== toolSteps ||
    executeEnds.length !== toolSteps ||
    calls.length !== toolSteps + 1
  ) {
    throw new Error(
      `expected ${toolSteps} closes and executes and ${toolSteps + 1} model calls, got ${closes.length}, ${executeStarts.length} and ${calls.length}`,
    );
  }
  return {
    toExecute: closes.map((close, i) => executeStarts[i]! - close),
    toNextCall: executeEnds.map((end, i) => calls[i + 1]! - end),
  };
}

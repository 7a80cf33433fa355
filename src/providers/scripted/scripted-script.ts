import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { ConfigError } from "../../spec/index.js";
import { PROVIDER_ERROR_CODES } from "../provider-error.js";
import { STOP_REASONS } from "../stream-part.js";

const count = z.number().int().nonnegative();

/** One scripted model response. A plain string is `{ text }`. */
export const scriptedTurnSchema = z.union([
  z.string(),
  z.strictObject({
    /** Streamed as text, token by token (protocol tags included, as a model would write them). */
    text: z.string().optional(),
    /** Streamed first, as reasoning. */
    reasoning: z.string().optional(),
    /** Native tool calls, streamed after the text with their input JSON in pieces. */
    toolCalls: z
      .array(
        z.strictObject({
          id: z.string().min(1).optional(),
          name: z.string().min(1),
          input: z.unknown(),
        }),
      )
      .optional(),
    /** Reported usage; by default input ≈ request characters / 4 and output = tokens streamed. */
    usage: z
      .strictObject({
        inputTokens: count.optional(),
        outputTokens: count.optional(),
        cacheReadTokens: count.optional(),
        cacheWriteTokens: count.optional(),
      })
      .optional(),
    stopReason: z.enum(STOP_REASONS).optional(),
    /** Fail: before the first byte (`afterTokens` absent) or mid-stream after that many tokens. */
    error: z
      .strictObject({
        code: z.enum(PROVIDER_ERROR_CODES),
        message: z.string().optional(),
        afterTokens: count.optional(),
        /** Fail this many attempts, then play the turn normally (tests of retries). Default: all. */
        times: z.number().int().positive().optional(),
      })
      .optional(),
    /** Only play this turn when the last user message contains this text. */
    when: z.string().optional(),
  }),
]);

/** One scripted turn, as written. */
export type ScriptedTurn = z.input<typeof scriptedTurnSchema>;

/** A script file: a list of turns, or `{ model?, turns }`. */
export const scriptFileSchema = z.union([
  z.array(scriptedTurnSchema).min(1),
  z.strictObject({
    model: z.string().min(1).optional(),
    turns: z.array(scriptedTurnSchema).min(1),
  }),
]);

/**
 * Reads a script from a YAML or JSON file. A bad file is a `ConfigError` naming the file and
 * every field path that is wrong.
 */
export function loadScript(path: string): { model?: string; turns: ScriptedTurn[] } {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError("scripted.unreadable", `cannot read the script ${path}`, {
      cause: error,
      hint: "Check the path given to the scripted provider",
    });
  }
  let value: unknown;
  try {
    value = parseYaml(text);
  } catch (error) {
    throw new ConfigError(
      "scripted.invalid",
      `${path} is not YAML or JSON: ${(error as Error).message}`,
      {
        hint: "A script is a list of turns: strings, or objects with text, reasoning, toolCalls, usage, stopReason, error",
      },
    );
  }
  const parsed = scriptFileSchema.safeParse(value);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.join(".") || "(file)"}: ${issue.message}`)
      .join("; ");
    throw new ConfigError("scripted.invalid", `${path}: ${issues}`, {
      hint: "A script is a list of turns: strings, or objects with text, reasoning, toolCalls, usage, stopReason, error",
    });
  }
  return Array.isArray(parsed.data) ? { turns: parsed.data } : parsed.data;
}

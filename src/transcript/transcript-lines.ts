import { z } from "zod";
import { canonicalJson, type SpoolEvent } from "../spec/index.js";

/**
 * The lines of `transcript.jsonl` that `event` becomes, each JSON followed by `\n`:
 * - a `token.delta` becomes one `token_delta` line per provider delta, cut by the lengths in
 *   `data.deltas` (one line for the whole text when `deltas` is absent, empty, or does not add up
 *   to the text's length):
 *   `{"seq":12,"type":"token_delta","step":"T:0","block":"text:0","text":"Hel"}`
 * - any other event becomes one lifecycle line with its data as canonical JSON:
 *   `{"seq":13,"id":"01J…","ts":"…","type":"action.dispatched","stream":{"kind":"step","id":"T:0"},"data":{…}}`
 *
 * Pure and deterministic: the same event always gives the same bytes.
 */
export function renderTranscriptLines(event: SpoolEvent): string[] {
  return event.type === "token.delta" ? deltaLines(event) : [lifecycleLine(event)];
}

/** `renderTranscriptLines(event).join("")`: the bytes `event` adds to the file. */
export function renderTranscriptText(event: SpoolEvent): string {
  if (event.type !== "token.delta") return lifecycleLine(event);
  const lines = deltaLines(event);
  return lines.length === 1 ? lines[0]! : lines.join("");
}

function lifecycleLine(event: SpoolEvent): string {
  return `{"seq":${event.seq},"id":${JSON.stringify(event.id)},"ts":${JSON.stringify(event.ts)},"type":${JSON.stringify(event.type)},"stream":{"kind":${JSON.stringify(event.stream.kind)},"id":${JSON.stringify(event.stream.id)}},"data":${canonicalJson(event.data)}}\n`;
}

function deltaLines(event: SpoolEvent): string[] {
  const data = event.data as { block: string; text: string; deltas?: readonly number[] };
  const head = `{"seq":${event.seq},"type":"token_delta","step":${JSON.stringify(event.stream.id)},"block":${JSON.stringify(data.block)},"text":`;
  const text = data.text;
  const deltas = data.deltas;
  if (deltas === undefined || deltas.length === 0 || sum(deltas) !== text.length) {
    return [`${head}${JSON.stringify(text)}}\n`];
  }
  const lines: string[] = [];
  let offset = 0;
  for (const length of deltas) {
    lines.push(`${head}${JSON.stringify(text.slice(offset, offset + length))}}\n`);
    offset += length;
  }
  return lines;
}

function sum(values: readonly number[]): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

/** A `token_delta` line of `transcript.jsonl`, parsed. */
export const tokenDeltaLine = z.object({
  seq: z.number().int().positive(),
  type: z.literal("token_delta"),
  step: z.string(),
  block: z.string(),
  text: z.string(),
});

/** A lifecycle line of `transcript.jsonl` (every event but `token.delta`), parsed. */
export const lifecycleLineSchema = z.object({
  seq: z.number().int().positive(),
  id: z.string(),
  ts: z.string(),
  type: z.string().refine((type) => type !== "token_delta", "is not a lifecycle type"),
  stream: z.object({ kind: z.string(), id: z.string() }),
  data: z.unknown(),
});

/** Any line of `transcript.jsonl`, parsed (tolerant of extra fields, strict on the ones used). */
export const transcriptLineSchema = z.union([tokenDeltaLine, lifecycleLineSchema]);

/** A parsed line of `transcript.jsonl`. */
export type TranscriptLine = z.output<typeof transcriptLineSchema>;

/**
 * Parses one line of `transcript.jsonl` (without its `\n`): the line, or why it is not one.
 * Never throws.
 */
export function parseTranscriptLine(
  text: string,
): { ok: true; line: TranscriptLine } | { ok: false; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, message: `not JSON: ${(error as Error).message}` };
  }
  const parsed = transcriptLineSchema.safeParse(value);
  if (parsed.success) return { ok: true, line: parsed.data };
  const issue = parsed.error.issues[0];
  return {
    ok: false,
    message:
      `not a transcript line: ${issue?.path.join(".") || "(line)"} ${issue?.message ?? ""}`.trim(),
  };
}

import { createProtocolParser, type ProtocolEvent } from "../../protocol/index.js";
import { seededRandom } from "../../spec/index.js";
import {
  type CommandContext,
  DB_OPTION,
  parseCommandArgs,
  parseInteger,
  UsageError,
} from "../context.js";
import { readSource } from "../input.js";

/** The largest piece `--random-chunks` cuts. */
const MAX_RANDOM_CHUNK = 16;

/**
 * `spool protocol parse [--chunk N | --random-chunks SEED] [--coalesce] [FILE | -]`: runs the
 * streaming protocol parser over a model output and prints its events as JSON lines.
 *
 * Without a chunking option a FILE is pushed in one piece and stdin as it arrives (so a live
 * stream can be piped in); `--chunk N` cuts the input into N-character pieces and
 * `--random-chunks SEED` into pieces of 1–16 characters drawn from a seeded generator (both in
 * UTF-16 units, so surrogate pairs can be split on purpose). `--coalesce` merges adjacent deltas of
 * one block, so every chunking of the same input prints the same lines. Opens no store (`--db` is
 * accepted and ignored); exits 0 whatever the output holds, 2 for bad flags or an unreadable FILE.
 */
export async function protocolParse(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "protocol parse";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    chunk: { type: "string" },
    "random-chunks": { type: "string" },
    coalesce: { type: "boolean" },
  });
  if (positionals.length > 1) {
    throw new UsageError(
      command,
      `unexpected argument ${JSON.stringify(positionals[1])}: give one FILE, or - for standard input`,
    );
  }
  if (values.chunk !== undefined && values["random-chunks"] !== undefined) {
    throw new UsageError(command, "--chunk and --random-chunks cannot be combined");
  }
  const size = parseInteger(command, "--chunk", values.chunk, 1);
  const seed = parseInteger(command, "--random-chunks", values["random-chunks"], 0);
  const source = positionals[0] ?? "-";
  const parser = createProtocolParser();
  const print = printer(ctx, values.coalesce === true);

  if (size === undefined && seed === undefined) {
    for await (const piece of read(ctx, source)) print(parser.push(piece));
  } else {
    let text = "";
    for await (const piece of read(ctx, source)) text += piece;
    const pieces = size === undefined ? randomPieces(text, seed!) : fixedPieces(text, size);
    for (const piece of pieces) print(parser.push(piece));
  }
  print(parser.end());
  print.flush();
  return 0;
}

/** The input as text: a FILE in one piece, stdin as it arrives (decoded as UTF-8). */
async function* read(ctx: CommandContext, source: string): AsyncGenerator<string> {
  const decoder = new TextDecoder();
  for await (const bytes of readSource(ctx, source)) {
    const text = decoder.decode(bytes, { stream: true });
    if (text.length > 0) yield text;
  }
  const rest = decoder.decode();
  if (rest.length > 0) yield rest;
}

function fixedPieces(text: string, size: number): string[] {
  const pieces: string[] = [];
  for (let i = 0; i < text.length; i += size) pieces.push(text.slice(i, i + size));
  return pieces;
}

/** Pieces of 1–16 characters; the same seed always cuts the same text the same way. */
function randomPieces(text: string, seed: number): string[] {
  const next = seededRandom(seed);
  const pieces: string[] = [];
  for (let i = 0; i < text.length; ) {
    const size = 1 + Math.floor(next() * MAX_RANDOM_CHUNK);
    pieces.push(text.slice(i, i + size));
    i += size;
  }
  return pieces;
}

/** Prints events as JSON lines; with `coalesce`, holds a delta until the next event shows it is whole. */
function printer(ctx: CommandContext, coalesce: boolean) {
  let pending: Extract<ProtocolEvent, { type: "block-delta" }> | undefined;
  let parts: string[] = [];
  const flush = () => {
    if (pending) ctx.out(JSON.stringify({ ...pending, text: parts.join("") }));
    pending = undefined;
    parts = [];
  };
  const print = (events: readonly ProtocolEvent[]) => {
    for (const event of events) {
      if (coalesce && event.type === "block-delta") {
        if (pending?.block !== event.block) {
          flush();
          pending = event;
        }
        parts.push(event.text);
        continue;
      }
      flush();
      ctx.out(JSON.stringify(event));
    }
  };
  return Object.assign(print, { flush });
}

import {
  assembleMessage,
  decodeRecordedStream,
  isOpenAIFlavourName,
  OPENAI_FLAVOURS,
  RECORDED_FORMATS,
  type RecordedFormat,
  type StreamPart,
} from "../../providers/index.js";
import {
  type CommandContext,
  DB_OPTION,
  parseCommandArgs,
  parseInteger,
  UsageError,
} from "../context.js";
import { readSourceBytes } from "../input.js";

/**
 * `spool providers decode [--format F] [--flavour NAME] [--parts [--raw]] [--chunk-bytes N] [FILE | -]`:
 * decodes a recorded provider stream (the HTTP body as the server sent it) through the real
 * provider SDK and prints the assembled message as JSON, or with `--parts` every stream part as a
 * JSON line. Without `--format` the format is recognised from the bytes. Exits 0 when the stream
 * ended normally, 1 when it ended with an error part (which is printed, with or without `--parts`),
 * 2 for bad flags (an unknown format or flavour).
 */
export async function providersDecode(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "providers decode";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    format: { type: "string" },
    flavour: { type: "string" },
    parts: { type: "boolean" },
    raw: { type: "boolean" },
    "chunk-bytes": { type: "string" },
  });
  if (positionals.length > 1) {
    throw new UsageError(
      command,
      `unexpected argument ${JSON.stringify(positionals[1])}: give one FILE, or - for standard input`,
    );
  }
  if (values.raw && !values.parts) throw new UsageError(command, "--raw only applies with --parts");
  const chunkBytes = parseInteger(command, "--chunk-bytes", values["chunk-bytes"], 1);
  const body = await readSourceBytes(ctx, positionals[0] ?? "-");
  const format =
    values.format === undefined ? recognise(command, body) : checkFormat(command, values.format);
  if (values.format === undefined)
    ctx.err(`spool: decoding as ${format} (recognised from the stream; pass --format to choose)`);

  if (values.flavour !== undefined && !isOpenAIFlavourName(values.flavour)) {
    throw new UsageError(
      command,
      `unknown --flavour ${JSON.stringify(values.flavour)}: use one of ${Object.keys(OPENAI_FLAVOURS).join(", ")}`,
    );
  }
  if (values.flavour !== undefined && format !== "openai-chat") {
    throw new UsageError(command, "--flavour only applies to --format openai-chat");
  }
  const parts: StreamPart[] = [];
  let last: StreamPart | undefined;
  for await (const part of decodeRecordedStream(body, format, {
    ...(values.flavour ? { flavour: values.flavour } : {}),
    ...(chunkBytes ? { chunkBytes } : {}),
    raw: values.raw === true,
  })) {
    last = part;
    if (values.parts) ctx.out(JSON.stringify(part));
    else parts.push(part);
  }
  const failed = last?.type === "error";
  if (!values.parts) ctx.out(JSON.stringify(assembleMessage(format, parts), null, 2));
  return failed ? 1 : 0;
}

function checkFormat(command: string, value: string): RecordedFormat {
  if ((RECORDED_FORMATS as readonly string[]).includes(value)) return value as RecordedFormat;
  throw new UsageError(
    command,
    `unknown --format ${JSON.stringify(value)}: use one of ${RECORDED_FORMATS.join(", ")}`,
  );
}

/** The format of a recorded body, from its first events. */
function recognise(command: string, body: Buffer): RecordedFormat {
  const head = body.subarray(0, 4096).toString("utf8");
  if (/"type"\s*:\s*"message_start"|event:\s*message_start/.test(head)) return "anthropic";
  if (/"type"\s*:\s*"response\.|event:\s*response\./.test(head)) return "openai-responses";
  if (/chat\.completion\.chunk|"choices"\s*:/.test(head)) return "openai-chat";
  throw new UsageError(
    command,
    `cannot tell the stream's format from its first bytes: pass --format ${RECORDED_FORMATS.join("|")}`,
  );
}

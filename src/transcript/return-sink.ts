import type { ProviderFormat, StreamPart } from "../providers/index.js";
import { type AssembledMessage, MessageAssembler } from "../providers/index.js";
import type { StreamSink } from "./sink.js";

/** A sink that assembles the message for the caller, and the promise of it. */
export interface ReturnSink {
  sink: StreamSink;
  /**
   * Resolves with the assembled message when the `stop` or `error` part arrives, or with what has
   * arrived when the sink is closed before that (its `stopReason` is then `error`). Never rejects.
   */
  message(): Promise<AssembledMessage>;
}

/**
 * The in-memory sink beside the persistent ones: it folds parts into an `AssembledMessage` (the
 * same one `message.completed` stores) and hands it to whoever awaits the step's result.
 */
export function createReturnSink(
  options: { format?: ProviderFormat; name?: string } = {},
): ReturnSink {
  const assembler = new MessageAssembler(options.format ?? "scripted");
  let resolve!: (message: AssembledMessage) => void;
  const done = new Promise<AssembledMessage>((settle) => {
    resolve = settle;
  });
  let settled = false;
  const finish = () => {
    if (settled) return;
    settled = true;
    resolve(assembler.message());
  };
  return {
    sink: {
      name: options.name ?? "return",
      write(part: StreamPart) {
        assembler.push(part);
        if (part.type === "stop" || part.type === "error") finish();
      },
      async close() {
        finish();
      },
    },
    message: () => done,
  };
}

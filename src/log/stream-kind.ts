import { STREAM_KINDS, StoreError, type StreamKind } from "../spec/index.js";

/**
 * Checks a stream kind before an adapter writes it into SQL text (literal kinds let the planners
 * use the partial stream index); kinds are a closed set, so anything else is refused.
 */
export function checkStreamKind(kind: string): StreamKind {
  if (!(STREAM_KINDS as readonly string[]).includes(kind)) {
    throw new StoreError("store.io", `unknown stream kind ${JSON.stringify(kind)}`, {
      hint: `Use one of ${STREAM_KINDS.join(", ")}`,
    });
  }
  return kind as StreamKind;
}

import type { ActionRequest, SourcePosition } from "./action-request.js";

/**
 * The blocks of a model's output. `text` is anything outside protocol tags; `thought`,
 * `response` and `feed` (`<context_feed id>`) are the tagged blocks.
 */
export type BlockKind = "text" | "thought" | "response" | "feed";

/** The precise kinds of malformed input the parser reports; parsing always goes on. */
export const PROTOCOL_ERROR_CODES = [
  "protocol.unclosed-tag",
  "protocol.unexpected-close",
  "protocol.bad-attribute",
  "protocol.missing-attribute",
  "protocol.unknown-action-type",
  "protocol.unknown-mode",
  "protocol.bad-action-body",
  "protocol.duplicate-id",
  "protocol.misplaced-tag",
] as const;
export type ProtocolErrorCode = (typeof PROTOCOL_ERROR_CODES)[number];

/**
 * What `push(chunk)` and `end()` return, in output order. Every block opens with `*-start`,
 * streams `*-delta`s as text arrives and closes with `*-end` (also when the input ended first:
 * then `closed` is false and an `protocol.unclosed-tag` error precedes it).
 *
 * Split invariance: for any chunking of the same input the events are identical once adjacent
 * deltas of one block are merged. Block numbers count blocks from 0 in output order.
 */
export type ProtocolEvent =
  | { type: "block-start"; kind: "text"; block: number; at: SourcePosition }
  | { type: "block-start"; kind: "thought"; block: number; at: SourcePosition }
  | { type: "block-start"; kind: "response"; block: number; final: boolean; at: SourcePosition }
  | { type: "block-start"; kind: "feed"; block: number; feedId: string; at: SourcePosition }
  | { type: "block-delta"; kind: BlockKind; block: number; text: string }
  | { type: "block-end"; kind: BlockKind; block: number; closed: boolean; at: SourcePosition }
  | {
      type: "action";
      action: ActionRequest;
      /** The thought block the action sat in, if any. */
      parentBlock?: number;
    }
  | {
      type: "error";
      code: ProtocolErrorCode;
      /** What was wrong and how to fix it, addressed to the model. */
      message: string;
      at: SourcePosition;
      /** What the parser expected at `at`, e.g. `one of sync, async, fire_and_forget`. */
      expected?: string;
      /** The action the error concerns, when it has an id. */
      actionId?: string;
    };

/**
 * The streaming protocol parser: model output (text with `<thought>`, `<action>`, `<response>`
 * and `<context_feed>` tags) in, `ProtocolEvent`s out. Pure, synchronous and incremental; see
 * `docs/protocol.md`.
 */

export { actionBodySchema, MAX_TIMEOUT_SECONDS } from "./action-body.js";
export {
  ACTION_MODES,
  ACTION_TYPES,
  type ActionMode,
  type ActionRequest,
  type ActionType,
  ON_ERROR_POLICIES,
  type OnErrorPolicy,
  type SourcePosition,
  VARIABLE_NAME_MAX,
  VARIABLE_NAME_PATTERN,
} from "./action-request.js";
export { coalesceDeltas } from "./coalesce-deltas.js";
export {
  type BlockKind,
  PROTOCOL_ERROR_CODES,
  type ProtocolErrorCode,
  type ProtocolEvent,
} from "./protocol-event.js";
export {
  createProtocolParser,
  type ProtocolParser,
  type ProtocolParserOptions,
} from "./protocol-parser.js";

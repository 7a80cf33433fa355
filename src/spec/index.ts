export { canonicalJson } from "./canonical-json.js";
export { canonicalText } from "./chain-link.js";
export {
  ConfigError,
  describeError,
  type EventIssue,
  EventValidationError,
  errorCodeOf,
  SpoolError,
  type SpoolErrorOptions,
  StoreError,
  type StoreErrorCode,
} from "./errors.js";
export {
  type Criticality,
  GENESIS_HASH,
  type NewEvent,
  type PreparedEvent,
  type SpoolEvent,
  STREAM_KINDS,
  type StreamKind,
  type StreamRef,
  storedEvent,
} from "./event.js";
export {
  type AnyNewEvent,
  EVENT_CATALOG,
  type EventData,
  type EventDefaults,
  type EventOf,
  type EventType,
  eventSpec,
  isEvent,
  type NewEventOf,
  prepareEvent,
} from "./event-catalog.js";
export {
  artifactHash,
  artifactRef,
  defineEvent,
  type EventSpec,
  IDENTIFIER_MAX,
  IDENTIFIER_PATTERN,
  identifier,
  isIdentifier,
  ulidString,
} from "./events/define-event.js";
export { STOP_REASONS } from "./events/message-events.js";
export { canonicalEvent, chainHash } from "./hash-chain.js";
export { editDistance, nearestName } from "./nearest-name.js";
export { seededRandom } from "./seeded-random.js";

/**
 * Relics: named persistent services with a lifecycle (`start`, `call`, `stop`) that actions of
 * `type="relic"` call as `<relic>.<method>`. A `RelicHost` starts them lazily, logs their
 * lifecycle and calls, and restarts them after fatal failures. Built in: `kv` (a key-value store
 * kept in the log) and `http` (requests to allow-listed hosts). See `docs/relics.md`.
 */
export { createHttpRelic, type HttpRelicOptions } from "./http-relic.js";
export { resolveRequestUrl } from "./http-target.js";
export { createKvRelic, KV_MAX_VALUE_BYTES, type KvRelicOptions } from "./kv-relic.js";
export { KV_EVENT_TYPES, type KvEntry, type KvPage, KvState } from "./kv-state.js";
export {
  RELIC_NAME_PATTERN,
  type Relic,
  type RelicContext,
  type RelicDescription,
  type RelicMethod,
} from "./relic.js";
export { isFatalRelicError, RelicError, type RelicErrorOptions } from "./relic-error.js";
export { createRelicExecutor, splitRelicAction } from "./relic-executor.js";
export {
  createRelicHost,
  type RelicCallOptions,
  type RelicHost,
  type RelicHostOptions,
  type RelicState,
} from "./relic-host.js";

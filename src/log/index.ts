export type {
  ArtifactInfo,
  ArtifactStore,
  ByteRange,
  PutArtifactOptions,
} from "./artifact-store.js";
export type {
  AppendBatchOptions,
  ContinuityHead,
  Durability,
  EventQuery,
  EventStore,
  Projection,
  ReadAhead,
  ReadQuery,
  SubscribeOptions,
  SubscriptionMessage,
} from "./event-store.js";
export { effectsMayLead } from "./event-store.js";
export type {
  LeaseAcquisition,
  LeaseFence,
  LeaseGranted,
  LeaseHeld,
  LeaseInfo,
  LeaseLost,
  LeaseRenewal,
  LeaseRow,
} from "./lease.js";
export type { EventPage, LogBackend, PendingEvent, WriteOptions } from "./log-backend.js";
export { createEventStore, type LogStoreOptions } from "./log-store.js";
export { type OpenStoreOptions, openEventStore, resolveStoreLocation } from "./open-store.js";
export { openPostgresBackend, type PostgresBackendOptions } from "./postgres/index.js";
export { redactUrl } from "./postgres/postgres-errors.js";
export { isSeqMoved, type SeqPrediction } from "./seq-prediction.js";
export {
  openSqliteBackend,
  type SqliteBackendOptions,
  sqlitePaths,
} from "./sqlite/sqlite-backend.js";
export { checkSqliteLocation } from "./sqlite/sqlite-open.js";
export {
  type ChainDamage,
  type ChainMismatch,
  type ChainReport,
  damageOf,
  verifyChain,
} from "./verify-chain.js";

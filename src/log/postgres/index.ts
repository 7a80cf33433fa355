/** The PostgreSQL adapter of the event log: open it with `openPostgresBackend`. */
export { ARTIFACT_CHUNK_BYTES } from "./postgres-artifacts.js";
export { openPostgresBackend, type PostgresBackendOptions } from "./postgres-backend.js";
export { redactUrl } from "./postgres-errors.js";

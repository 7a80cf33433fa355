/**
 * Spool: a runtime for long-lived LLM agents. This entry point exports the continuity log (the
 * event store on SQLite or PostgreSQL, artifacts, hash-chain verification) and the event catalog.
 */
export * from "./log/index.js";
export * from "./spec/index.js";

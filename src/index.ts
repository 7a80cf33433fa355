/**
 * Spool: a runtime for long-lived LLM agents. This entry point exports the continuity log (the
 * event store on SQLite or PostgreSQL, artifacts, hash-chain verification), the event catalog,
 * the streaming protocol parser, the action scheduler with its step runner, context feeds, and the
 * continuity module (context compiler, summaries, handoffs).
 */
export * from "./actions/index.js";
export * from "./app/index.js";
export * from "./continuity/index.js";
export * from "./directives/index.js";
export * from "./feeds/index.js";
export * from "./log/index.js";
export * from "./protocol/index.js";
export * from "./providers/index.js";
export * from "./relics/index.js";
export * from "./runtime/index.js";
export * from "./spec/index.js";
export * from "./telemetry/index.js";
export * from "./tools/index.js";
export * from "./transcript/index.js";
export * from "./workflows/index.js";

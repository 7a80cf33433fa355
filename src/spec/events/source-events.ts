import { z } from "zod";
import { actionError } from "./action-events.js";
import { artifactRef, defineEvent, identifier } from "./define-event.js";

const sourceId = identifier;
const sourceStreams = ["source"] as const;
/** A source's position, as its adapter writes it (JSON object; opaque to everyone else). */
const cursor = z.record(z.string(), z.unknown());
/** Who changed a source: the manifest at start, an internal action of the model, the runtime, the CLI or a person over the HTTP API. */
const changedBy = {
  by: z.enum(["manifest", "action", "runtime", "cli", "http"]),
  action_id: identifier.optional(),
};
const count = z.number().int().nonnegative();

/**
 * Continuous inputs (`src/sources/`). Every event is on the source's own stream (`{ kind:
 * "source", id }`). A chunk carries the cursor after it in the same event, so the log alone says
 * where each source resumes after a crash: no line lost, none delivered twice.
 */
export const sourceEvents = {
  "source.added": defineEvent({
    description: "A source was declared (from the manifest, or added by the model or the CLI).",
    criticality: "critical",
    streams: sourceStreams,
    schema: z.strictObject({
      source_id: sourceId,
      /** The definition as validated (manifest shape). */
      definition: z.record(z.string(), z.unknown()),
      ...changedBy,
    }),
  }),
  "source.removed": defineEvent({
    description: "A source was removed: it reads no more; its chunks stay in the log.",
    criticality: "critical",
    streams: sourceStreams,
    schema: z.strictObject({ source_id: sourceId, ...changedBy }),
  }),
  "source.started": defineEvent({
    description: "A source began reading (at start, after a restart or a resume), from a cursor.",
    criticality: "critical",
    streams: sourceStreams,
    schema: z.strictObject({
      source_id: sourceId,
      kind: z.string().min(1).max(64),
      target: z.string().max(4_096),
      /** Where it resumes: the cursor of its last logged chunk; absent at its very start. */
      cursor: cursor.optional(),
    }),
  }),
  "source.chunk": defineEvent({
    description: "Lines a source read, with the cursor after them: durable before it reads on.",
    criticality: "critical",
    streams: sourceStreams,
    schema: z.strictObject({
      source_id: sourceId,
      /** The chunk's number in its source: 1, 2, 3, … with no gap. */
      n: z.number().int().min(1),
      /** The lines (without newlines), unless they are in `artifact` (one line per `\n`). */
      lines: z.array(z.string()).max(1_000_000).optional(),
      artifact: artifactRef.optional(),
      /** How many lines the chunk holds (also when they are in the artifact). */
      line_count: count,
      /** Input bytes the chunk consumed, skipped lines included. */
      bytes: count,
      /** Where the source resumes after this chunk. */
      cursor,
      channel: z.enum(["stdout", "stderr"]).optional(),
      skipped: count.optional(),
      cut: z.strictObject({ lines: count, bytes: count }).optional(),
      invalid_bytes: count.optional(),
      /** Lines matching each of the source's named patterns. */
      matches: z.record(z.string(), count).optional(),
    }),
  }),
  "source.rotated": defineEvent({
    description: "The input changed identity (renamed, truncated, recreated, deleted, restarted).",
    criticality: "critical",
    streams: sourceStreams,
    schema: z.strictObject({
      source_id: sourceId,
      reason: z.enum(["renamed", "truncated", "recreated", "deleted", "restarted"]),
      cursor,
      detail: z.string().max(4_096).optional(),
    }),
  }),
  "source.paused": defineEvent({
    description: "A source stopped reading for now; its cursor stays where it is.",
    criticality: "critical",
    streams: sourceStreams,
    schema: z.strictObject({
      source_id: sourceId,
      reason: z.string().max(1_000).optional(),
      ...changedBy,
    }),
  }),
  "source.resumed": defineEvent({
    description: "A paused source reads again from its cursor.",
    criticality: "critical",
    streams: sourceStreams,
    schema: z.strictObject({ source_id: sourceId, ...changedBy }),
  }),
  "source.exhausted": defineEvent({
    description: "A source's input ended for good (a dataset read to its end).",
    criticality: "critical",
    streams: sourceStreams,
    schema: z.strictObject({ source_id: sourceId, cursor }),
  }),
  "source.failed": defineEvent({
    description:
      "A source hit a problem: `final` when it stops (fix and resume it), else it retries.",
    criticality: "critical",
    streams: sourceStreams,
    schema: z.strictObject({
      source_id: sourceId,
      error: actionError,
      final: z.boolean(),
      cursor: cursor.optional(),
      /** A command's exit code (null: killed by a signal). */
      exit_code: z.number().int().nullable().optional(),
      retry_in_ms: count.optional(),
    }),
  }),
};

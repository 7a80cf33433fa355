import { z } from "zod";
import { defineEvent } from "./define-event.js";

const base64 = z.string().regex(/^[A-Za-z0-9+/]+={0,2}$/, "must be base64");

/** Signed checkpoints of a continuity's hash chain, and the health of the sinks that watch it. */
export const checkpointEvents = {
  "checkpoint.signed": defineEvent({
    description:
      "An Ed25519 signature over the continuity's hash-chain head at a step boundary, a handoff, a resume or a finish.",
    criticality: "critical",
    streams: ["continuity", "thread", "step"],
    schema: z.strictObject({
      reason: z.enum(["step", "handoff", "resume", "finish", "manual"]),
      /** The seq of the newest event the signature covers. */
      seq: z.number().int().positive(),
      /** That event's hash: the chain head. */
      head_hash: z.string().regex(/^[0-9a-f]{64}$/),
      /** The sha256 (hex, first 16 characters) of the public key, naming the key that signed. */
      key_id: z.string().regex(/^[0-9a-f]{16}$/),
      /** The thread whose step boundary this is, when it is one. */
      thread: z.string().min(1).max(128).optional(),
      /** sha256 (hex) of the thread's transcript.jsonl bytes before this checkpoint's line. */
      transcript_sha256: z
        .string()
        .regex(/^[0-9a-f]{64}$/)
        .optional(),
      /** The Ed25519 signature of `checkpointText` (src/transcript/signing.ts), base64. */
      signature: base64,
    }),
  }),
  "sink.failed": defineEvent({
    description:
      "A stream sink (transcript, knowledge file, UI) failed; the stream and the other sinks went on.",
    criticality: "critical",
    streams: ["step", "thread", "continuity"],
    schema: z.strictObject({
      sink: z.string().min(1).max(200),
      code: z.string().min(1).max(200),
      message: z.string().max(20_000),
      /** Parts the sink did not get because of the failure. */
      dropped_parts: z.number().int().nonnegative(),
    }),
  }),
  "sink.lagging": defineEvent({
    description: "A slow sink fell behind the stream by more than its limit; droppable.",
    criticality: "droppable",
    streams: ["step", "thread", "continuity"],
    schema: z.strictObject({
      sink: z.string().min(1).max(200),
      queued_parts: z.number().int().nonnegative(),
      lag_ms: z.number().nonnegative(),
    }),
  }),
};

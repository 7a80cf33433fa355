import { z } from "zod";
import { defineEvent, identifier } from "./define-event.js";

/** Relic names are plain words: `kv`, `http`, `search_index` (no dots: `kv.get` is relic.method). */
const relicName = z
  .string()
  .regex(/^[a-z][a-z0-9_-]{0,63}$/, "must be a lowercase word (letters, digits, _ and -)");
const methodName = relicName;
const durationMs = z.number().nonnegative();
const error = z.strictObject({ code: z.string().min(1).max(200), message: z.string().max(20_000) });
/** A key of the built-in `kv` relic. */
const kvKey = z.string().min(1).max(512);
const relicStreams = ["continuity"] as const;

/**
 * Relics: named persistent services with a lifecycle (`relic.*`), and the state of the built-in
 * `kv` relic (`kv.*`), which lives in the log itself so it survives crashes and replays on every
 * backend. The kv state is a fold over `kv.set` and `kv.deleted`: a key's version is the `seq` of
 * the `kv.set` that wrote it.
 */
export const relicEvents = {
  "relic.started": defineEvent({
    description: "A relic started, on its first call or after a fatal failure (a restart).",
    criticality: "critical",
    streams: relicStreams,
    schema: z.strictObject({
      relic: relicName,
      /** 0 for the first start, then 1, 2, … for each restart. */
      restart: z.number().int().nonnegative(),
    }),
  }),
  "relic.stopped": defineEvent({
    description: "A relic stopped: its host closed, or it is being restarted after a failure.",
    criticality: "critical",
    streams: relicStreams,
    schema: z.strictObject({ relic: relicName, reason: z.string().min(1).max(2000) }),
  }),
  "relic.failed": defineEvent({
    description:
      "A relic failed to start, or a call failed fatally; it restarts on its next call unless its restarts are used up.",
    criticality: "critical",
    streams: relicStreams,
    schema: z.strictObject({
      relic: relicName,
      phase: z.enum(["start", "call"]),
      method: methodName.optional(),
      error,
      /** Failures so far, this one included. */
      failures: z.number().int().min(1),
      will_restart: z.boolean(),
    }),
  }),
  "browser.crashed": defineEvent({
    description:
      "The browser relic's Chromium went away on its own (killed or crashed); it restarts on the next browser call.",
    criticality: "critical",
    streams: relicStreams,
    schema: z.strictObject({ relic: relicName, reason: z.string().min(1).max(2000) }),
  }),
  "relic.called": defineEvent({
    description: "A call of a relic method ended, with its status and duration.",
    criticality: "critical",
    streams: relicStreams,
    schema: z.strictObject({
      relic: relicName,
      method: methodName,
      status: z.enum(["succeeded", "failed"]),
      duration_ms: durationMs,
      error: error.optional(),
      action_id: identifier.optional(),
    }),
  }),
  "kv.set": defineEvent({
    description: "The kv relic stored a value under a key; the event's seq is the key's version.",
    criticality: "critical",
    streams: relicStreams,
    schema: z.strictObject({ relic: relicName, key: kvKey, value: z.unknown() }),
  }),
  "kv.deleted": defineEvent({
    description: "The kv relic deleted a key.",
    criticality: "critical",
    streams: relicStreams,
    schema: z.strictObject({ relic: relicName, key: kvKey }),
  }),
};

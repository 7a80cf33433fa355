import type { z } from "zod";
import { type Envelope, envelopeSchema, isPlainEnvelope } from "./envelope.js";
import { type EventIssue, EventValidationError } from "./errors.js";
import type { NewEvent, PreparedEvent, SpoolEvent } from "./event.js";
import { accessEvents } from "./events/access-events.js";
import { actionEvents } from "./events/action-events.js";
import { artifactEvents } from "./events/artifact-events.js";
import { checkpointEvents } from "./events/checkpoint-events.js";
import { contextEvents } from "./events/context-events.js";
import { continuityEvents } from "./events/continuity-events.js";
import type { EventSpec } from "./events/define-event.js";
import { feedEvents } from "./events/feed-events.js";
import { frameEvents } from "./events/frame-events.js";
import { graphEvents } from "./events/graph-events.js";
import { mcpEvents } from "./events/mcp-events.js";
import { memoryEvents } from "./events/memory-events.js";
import { messageEvents } from "./events/message-events.js";
import { relicEvents } from "./events/relic-events.js";
import { runEvents } from "./events/run-events.js";
import { sourceEvents } from "./events/source-events.js";
import { threadEvents } from "./events/thread-events.js";
import { tokenEvents } from "./events/token-events.js";
import { turnEvents } from "./events/turn-events.js";
import { watchEvents } from "./events/watch-events.js";
import { compileFastParse, NOT_FAST } from "./fast-parse.js";

/**
 * Every event type Spool writes, with its schema and criticality. Later modules add their families
 * here; nothing writes an event whose type is not in this table.
 */
export const EVENT_CATALOG = {
  ...continuityEvents,
  ...turnEvents,
  ...threadEvents,
  ...artifactEvents,
  ...tokenEvents,
  ...actionEvents,
  ...feedEvents,
  ...messageEvents,
  ...graphEvents,
  ...checkpointEvents,
  ...relicEvents,
  ...runEvents,
  ...contextEvents,
  ...sourceEvents,
  ...watchEvents,
  ...frameEvents,
  ...mcpEvents,
  ...accessEvents,
  ...memoryEvents,
} satisfies Record<string, EventSpec>;

// Every type without a hand-written fast check gets one compiled from its schema, when the
// schema is plain enough (`compileFastParse`): most events the runtime appends skip zod.
for (const spec of Object.values(EVENT_CATALOG) as EventSpec[]) {
  if (spec.fastData) continue;
  const parse = compileFastParse(spec.schema);
  if (parse) {
    spec.fastData = (data) => {
      const parsed = parse(data);
      return parsed === NOT_FAST ? undefined : parsed;
    };
  }
}

/** A type name from the catalog. */
export type EventType = keyof typeof EVENT_CATALOG;

/** The `data` of a stored event of type `T`. */
export type EventData<T extends EventType> = z.output<(typeof EVENT_CATALOG)[T]["schema"]>;

/** What a caller appends for type `T`; `data` is checked against the catalog when appended. */
export type NewEventOf<T extends EventType> = NewEvent<
  z.input<(typeof EVENT_CATALOG)[T]["schema"]>
> & {
  type: T;
};

/** Any appendable event, discriminated by `type`. */
export type AnyNewEvent = { [T in EventType]: NewEventOf<T> }[EventType];

/** A stored event of type `T`. */
export type EventOf<T extends EventType> = SpoolEvent<EventData<T>> & { type: T };

/** The catalog entry for a type, or `undefined` when the catalog does not have it. */
export function eventSpec(type: string): EventSpec | undefined {
  return Object.hasOwn(EVENT_CATALOG, type)
    ? (EVENT_CATALOG as Record<string, EventSpec>)[type]
    : undefined;
}

/** True when `event` is a stored event of type `type`; narrows its `data`. */
export function isEvent<T extends EventType>(event: SpoolEvent, type: T): event is EventOf<T> {
  return event.type === type;
}

/** Where ids and times come from when an event does not bring its own (injected in tests). */
export interface EventDefaults {
  now(): string;
  newId(): string;
}

/**
 * Validates an event against the envelope and its catalog schema and fills in defaults.
 * Throws `EventValidationError` listing every problem; the result is ready to be positioned in a log.
 */
export function prepareEvent(input: NewEvent, defaults: EventDefaults): PreparedEvent {
  // The common case, checked without building anything: a plain envelope, a catalog type whose
  // stream rules it keeps, and data its schema accepts.
  if (isPlainEnvelope(input)) {
    const spec = eventSpec(input.type);
    if (spec && keepsStreamRules(input, spec)) {
      const fast = spec.fastData?.(input.data);
      if (fast !== undefined) return prepared(input, input.type, spec, fast, defaults);
      const data = spec.schema.safeParse(input.data);
      if (data.success) return prepared(input, input.type, spec, data.data, defaults);
    }
  }
  const typeName = typeof input?.type === "string" ? input.type : String(input?.type);
  const envelope = isPlainEnvelope(input)
    ? { success: true as const, data: input }
    : envelopeSchema.safeParse(input);
  const issues: EventIssue[] = envelope.success ? [] : toIssues(envelope.error, []);
  const spec = eventSpec(typeName);
  if (!spec) {
    const known = Object.keys(EVENT_CATALOG);
    const family = typeName.split(".")[0] ?? "";
    const near = known.filter((name) => name.startsWith(`${family}.`));
    throw new EventValidationError(
      typeName,
      [
        {
          path: "type",
          message: `is not in the event catalog${near.length ? ` (did you mean ${near.join(" or ")})` : ""}`,
        },
      ],
      { details: { unknownType: true, known } },
    );
  }
  const data = spec.schema.safeParse(input?.data);
  if (!data.success) issues.push(...toIssues(data.error, ["data"]));
  if (envelope.success) {
    const stream = envelope.data.stream;
    if (stream && !spec.streams.includes(stream.kind)) {
      issues.push({
        path: "stream.kind",
        message: `must be one of ${spec.streams.join(", ")} for ${typeName}`,
      });
    }
    if (stream?.kind === "continuity" && stream.id !== envelope.data.continuity) {
      issues.push({
        path: "stream.id",
        message: "of a continuity stream must be the continuity's own id",
      });
    }
    if (!stream && !spec.streams.includes("continuity")) {
      issues.push({
        path: "stream",
        message: `is required for ${typeName} (a ${spec.streams.join(" or ")} stream)`,
      });
    }
    if (spec.input && !envelope.data.actor)
      issues.push({ path: "actor", message: "is required on inputs" });
    if (spec.input && !envelope.data.origin)
      issues.push({ path: "origin", message: "is required on inputs" });
  }
  if (issues.length > 0 || !envelope.success || !data.success)
    throw new EventValidationError(typeName, issues);
  return prepared(envelope.data, typeName, spec, data.data, defaults);
}

/** The stream checks of `prepareEvent`, as a yes or no for its fast path. */
function keepsStreamRules(value: Envelope, spec: EventSpec): boolean {
  const stream = value.stream;
  if (!stream && !spec.streams.includes("continuity")) return false;
  if (stream && !spec.streams.includes(stream.kind)) return false;
  if (stream?.kind === "continuity" && stream.id !== value.continuity) return false;
  return !spec.input || (Boolean(value.actor) && Boolean(value.origin));
}

function prepared(
  value: Envelope,
  type: string,
  spec: EventSpec,
  data: unknown,
  defaults: EventDefaults,
): PreparedEvent {
  return {
    id: value.id ?? defaults.newId(),
    continuity: value.continuity,
    // A copy: the caller's object may change after append returns.
    stream: value.stream
      ? { kind: value.stream.kind, id: value.stream.id }
      : { kind: "continuity", id: value.continuity },
    type,
    ts: value.ts ?? defaults.now(),
    actor: value.actor ?? null,
    origin: value.origin ?? null,
    criticality: spec.criticality,
    data,
  };
}

function toIssues(error: z.ZodError, prefix: readonly PropertyKey[]): EventIssue[] {
  return error.issues.map((issue) => ({
    path: [...prefix, ...issue.path]
      .map((part, index) =>
        typeof part === "number" ? `[${part}]` : `${index ? "." : ""}${String(part)}`,
      )
      .join(""),
    message: issue.message,
  }));
}

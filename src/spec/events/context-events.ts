import { z } from "zod";
import { artifactRef, defineEvent, identifier } from "./define-event.js";
import { contentBlockData } from "./message-events.js";

const seq = z.number().int().nonnegative();
const error = z.strictObject({ code: z.string().min(1).max(200), message: z.string().max(20_000) });
const summarizer = z.string().min(1).max(200);
const attempt = z.number().int().min(1);
/** Why a summary was made: pre-computed in the background, at a handoff, or brought up to date. */
const summaryMode = z.enum(["precompute", "handoff", "update"]);
/** Which hook, on which hook event: the fields every hook event starts with. */
const hookRef = { hook: identifier, event: z.string().min(1).max(100) };

/** A contiguous range of a thread's events (by seq) that a summary or a bundle covers. */
export const seqRange = z.strictObject({ thread: identifier, from_seq: seq, to_seq: seq });

const chunk = z.number().int().min(1);
/** Chunks `from_chunk`..`to_chunk` of a source. */
const chunkRange = z.strictObject({ from_chunk: chunk, to_chunk: chunk });
/**
 * Chunks of one source (numbered 1, 2, 3… per source) and the cursor after the last: what a
 * delivery turn carries (`turn.added`'s `sources`) and what a summary covers.
 */
export const chunkSpan = z.strictObject({
  source_id: identifier,
  from_chunk: chunk,
  to_chunk: chunk,
  cursor: z.record(z.string(), z.unknown()),
});
const chunkSpans = z.array(chunkSpan).max(256);

/**
 * A browser page result a carried message holds whole (a snapshot, a screenshot): a later one in
 * the continuation replaces it by one line of history.
 */
const pageResult = z.strictObject({
  kind: z.enum(["snapshot", "screenshot"]),
  action_id: z.string().min(1).max(500),
  native: z.boolean(),
  position: z.number().int().nonnegative(),
  type: z.string().min(1).max(100),
  name: z.string().min(1).max(500),
  tab: z.string().max(100),
  url: z.string().max(100_000),
  title: z.string().max(100_000),
  diff: z.boolean().optional(),
  artifact: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  media_type: z.string().min(1).max(100).optional(),
});
const pageResults = z.array(pageResult).max(1000);

/** An image of a carried message: its bytes, or the artifact that holds them (a screenshot). */
const seedImage = z.strictObject({
  type: z.literal("image"),
  media_type: z.string().min(1).max(100),
  data: z.string(),
  artifact: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
});

/** A message as a continuation's seed carries it: the provider-neutral form, snake_case blocks. */
export const seedMessage = z.discriminatedUnion("role", [
  z.strictObject({
    role: z.literal("user"),
    content: z.union([
      z.string().max(10_000_000),
      z.array(
        z.discriminatedUnion("type", [
          z.strictObject({ type: z.literal("text"), text: z.string().max(10_000_000) }),
          seedImage,
        ]),
      ),
    ]),
    /** The event the message came from in the thread it was carried from. */
    seq,
    turn: z.boolean(),
    /** For a source's delivery turn: the chunks it delivers. */
    sources: chunkSpans.optional(),
    /** The browser page results its results text holds whole. */
    pages: pageResults.optional(),
  }),
  z.strictObject({
    role: z.literal("assistant"),
    content: z.union([z.string().max(10_000_000), z.array(contentBlockData)]),
    seq,
  }),
  z.strictObject({
    role: z.literal("tool"),
    results: z.array(
      z.strictObject({
        tool_call_id: z.string().min(1).max(500),
        name: z.string().max(500).optional(),
        output: z.string().max(10_000_000),
        is_error: z.boolean().optional(),
        /** Images the tool returned (a screenshot); absent in events written before there were any. */
        images: z.array(seedImage).max(100).optional(),
      }),
    ),
    seq,
    /** The browser page results its tool results hold whole. */
    pages: pageResults.optional(),
  }),
]);

/** One summary of a thread lineage's chain, as a bundle and a seed carry it. */
export const summaryLink = z.strictObject({
  id: identifier,
  summarizer,
  text: z.string().max(1_000_000),
  tokens: z.number().int().nonnegative(),
  covers: seqRange,
  /** Per source, the chunks of the delivery turns the summary covers (`summary.completed`). */
  sources: chunkSpans.optional(),
});

/**
 * The continuity module's record: what each model call's context was compiled from, what was
 * pinned, every hook firing, every summary a worker produced, and each phase of a handoff.
 */
export const contextEvents = {
  "context.pinned": defineEvent({
    description:
      "A rule or fact was pinned: every later context of the continuity carries it, after every handoff.",
    criticality: "critical",
    streams: ["continuity", "thread"],
    schema: z.strictObject({
      id: identifier,
      kind: z.enum(["rule", "fact"]),
      text: z.string().min(1).max(4000),
      /** Who pinned it: `user`, or the thread whose model did. */
      by: z.string().min(1).max(200),
    }),
  }),
  "context.unpinned": defineEvent({
    description: "A pinned rule or fact was removed; later contexts leave it out.",
    criticality: "critical",
    streams: ["continuity", "thread"],
    schema: z.strictObject({ id: identifier, by: z.string().min(1).max(200) }),
  }),
  "context.feeds": defineEvent({
    description:
      "The context feeds a step was given, as rendered from the agent's feeds just before its compile (replay serves them from here).",
    criticality: "critical",
    streams: ["step"],
    schema: z.strictObject({
      text: z.string().min(1).max(1_000_000),
      /**
       * What `$id` gave in the step's actions and responses: each feed's value (absent when no
       * feed had one). Replay substitutes from here.
       */
      values: z.record(z.string(), z.string()).optional(),
    }),
  }),
  "hook.fired": defineEvent({
    description: "A hook's condition held for a hook event, and its action was started.",
    criticality: "critical",
    streams: ["thread", "worker"],
    schema: z.strictObject({
      ...hookRef,
      layer: z.number().int().min(1).max(2),
      item_type: z.enum(["directive", "tool"]),
      item_id: z.string().min(1).max(200),
      params: z.record(z.string(), z.unknown()),
      /**
       * `<thread>@hook<n>`, when the hook runs an action: the directive's child thread, or the
       * tool's step stream, and the worker stream its outcome lands in.
       */
      worker: identifier.optional(),
    }),
  }),
  "hook.completed": defineEvent({
    description: "A hook's action ended: what it decided or produced.",
    criticality: "critical",
    streams: ["thread", "worker"],
    schema: z.strictObject({
      ...hookRef,
      outcome: z.string().min(1).max(200),
      detail: z.string().max(20_000).optional(),
    }),
  }),
  "hook.failed": defineEvent({
    description: "A hook's action failed; the run goes on as if the hook had not fired.",
    criticality: "critical",
    streams: ["thread", "worker"],
    schema: z.strictObject({
      ...hookRef,
      error,
    }),
  }),
  "summary.started": defineEvent({
    description:
      "A summarizer began on a thread: in the background from the pre-compute pressure, or at a handoff.",
    criticality: "critical",
    streams: ["worker"],
    schema: z.strictObject({
      thread: identifier,
      summarizer,
      mode: summaryMode,
      covers: seqRange,
      attempt,
      /** The summary this one brings up to date (`update`). */
      previous: identifier.optional(),
    }),
  }),
  "summary.completed": defineEvent({
    description:
      "A summarizer produced a thread's summary: its text, size and the event range it covers.",
    criticality: "critical",
    streams: ["worker"],
    schema: z.strictObject({
      id: identifier,
      thread: identifier,
      summarizer,
      mode: summaryMode,
      covers: seqRange,
      text: z.string().min(1).max(1_000_000),
      tokens: z.number().int().nonnegative(),
      artifact: artifactRef,
      /** True when the text was cut to the summarizer's token budget. */
      truncated: z.boolean().optional(),
      previous: identifier.optional(),
      /**
       * Per source, the chunks of the delivery turns inside `covers` that the summarizer read
       * (with those of the summary it brings up to date), and the cursor after the last.
       */
      sources: chunkSpans.optional(),
    }),
  }),
  "summary.failed": defineEvent({
    description:
      "A summarizer failed (an error, a timeout, an empty summary, or a restart cut it off); nothing it did is used.",
    criticality: "critical",
    streams: ["worker"],
    schema: z.strictObject({
      thread: identifier,
      summarizer,
      mode: summaryMode,
      attempt,
      /** `interrupted`: a restart found it started and never ended (recovery wrote this). */
      reason: z.enum(["error", "timeout", "empty", "cancelled", "interrupted"]),
      error,
    }),
  }),
  "handoff.started": defineEvent({
    description:
      "A thread reached the handoff pressure and began handing its work to a continuation thread.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      continuation: identifier,
      reason: z.string().min(1).max(2000),
      tokens_used: z.number().int().nonnegative(),
      max_tokens: z.number().int().positive(),
      pressure_ratio: z.number().nonnegative(),
      summarizer,
      attempt,
    }),
  }),
  "handoff.deferred": defineEvent({
    description:
      "A handoff could not get a summary; the thread still fits, so it goes on and the handoff is retried later.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      continuation: identifier,
      attempt,
      /** The thread step at or after which the handoff is tried again. */
      retry_at_step: z.number().int().nonnegative(),
      reason: z.string().min(1).max(2000),
    }),
  }),
  "context.input-cut": defineEvent({
    description:
      "An input too long for the thread's context (a user turn, a tool's output, a step's results) was cut to an excerpt; the whole text is an artifact the model can recall. Logged before the compile that uses the cut.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      /** The message cut: its seq in the thread's history, its role, and for a tool result its call. */
      seq,
      role: z.enum(["user", "tool"]),
      tool_call_id: z.string().min(1).max(200).optional(),
      /** Its size: characters, estimated tokens, and the tokens one input may take. */
      chars: z.number().int().nonnegative(),
      tokens: z.number().int().nonnegative(),
      limit: z.number().int().positive(),
      /** Characters of its start the context keeps. */
      kept_chars: z.number().int().nonnegative(),
      artifact: artifactRef,
    }),
  }),
  "handoff.seeded": defineEvent({
    description:
      "A continuation thread's starting context: the lineage's summary chain and the trailing messages carried over.",
    criticality: "critical",
    streams: ["thread"],
    schema: z.strictObject({
      from: identifier,
      mode: z.enum(["summary", "trailing-only"]),
      summaries: z.array(summaryLink).max(1000),
      trailing: z.array(seedMessage).max(100_000),
      /** The run goes on after the handoff: the seed ends with an instruction to continue. */
      resume: z.boolean(),
      /**
       * Where each source stands: the lineage was delivered chunks `from_chunk`..`to_chunk`, and
       * the continuation goes on at `to_chunk + 1`, after `cursor`. `summarized` (in the chain)
       * and `carried` (in `trailing`, verbatim) never overlap; chunks between them, if any, are in
       * neither (a summary failed).
       */
      sources: z
        .array(
          chunkSpan.extend({ summarized: chunkRange.optional(), carried: chunkRange.optional() }),
        )
        .max(256)
        .optional(),
      tokens: z.strictObject({
        summary: z.number().int().nonnegative(),
        trailing: z.number().int().nonnegative(),
      }),
    }),
  }),
};

/** `context.compiled` of the continuity compiler: which parts a model call's context holds. */
export const compiledContextData = z.strictObject({
  strategy: z.string().min(1).max(100),
  /** Messages of the thread sent, and how many older ones were left out to fit. */
  messages: z.number().int().nonnegative(),
  omitted: z.number().int().nonnegative(),
  /** The estimated input tokens, and the budget they had to fit in. */
  tokens: z.number().int().nonnegative(),
  budget: z.number().int().nonnegative(),
  /** sha256 of the request's canonical JSON: replay re-compiles and compares. */
  digest: z.string().regex(/^[0-9a-f]{64}$/),
  /** Tokens per part of the bundle. */
  parts: z
    .strictObject({
      system: z.number().int().nonnegative(),
      pinned: z.number().int().nonnegative(),
      summaries: z.number().int().nonnegative(),
      feeds: z.number().int().nonnegative(),
      messages: z.number().int().nonnegative(),
      /** Memory from other continuities (`memory.recalled`), when the thread was given any. */
      memory: z.number().int().nonnegative().optional(),
    })
    .optional(),
  /** The raw event ranges the messages came from, and the summaries and pins included. */
  ranges: z.array(seqRange).max(1000).optional(),
  summaries: z.array(identifier).max(1000).optional(),
  pinned: z.array(identifier).max(10_000).optional(),
  /** The memory entries included (`memory.recalled` hit ids), when any were. */
  memories: z.array(identifier).max(100).optional(),
  /**
   * What else decides the request, by reference (with the log, these fields rebuild it exactly;
   * `bundleManifest` gathers them): the model, the artifact holding the system prompt (stored
   * once per distinct prompt), and sha256 of the native tool specs and of the feeds text.
   */
  model: z.string().min(1).max(200).optional(),
  system: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  tools: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  feeds: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  /** The manifest as a separate artifact: logs written before it was kept inline (above). */
  bundle: artifactRef.optional(),
  /** The newest user turn could not fit with everything else: the request is over budget. */
  over_budget: z.boolean().optional(),
  /**
   * The call continued the provider's conversation (OpenAI Responses `previous_response_id`)
   * instead of sending the whole context: the id, how many messages were sent after it, and the
   * sha256 of the request actually sent (replay sends the same one). `digest` above stays the
   * whole context's, which is what is sent again if the provider no longer knows the id.
   */
  cursor: z
    .strictObject({
      previous_response_id: z.string().min(1).max(500),
      messages: z.number().int().positive(),
      digest: z.string().regex(/^[0-9a-f]{64}$/),
    })
    .optional(),
});

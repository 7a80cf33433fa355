import type { EventStore } from "../log/index.js";
import type { ProviderMessage } from "../providers/index.js";
import { describeError, type EventData, errorCodeOf, type SpoolEvent } from "../spec/index.js";
import type { ContextMessage, SeqRange, SummaryItem } from "./context-bundle.js";
import { spanFromData, spanToData } from "./seed-messages.js";
import {
  deliveredSpans,
  mergeSpans,
  renderSourcesInput,
  type SourceMode,
} from "./source-coverage.js";
import { TRANSCRIPT_FRAME_CHARS, transcriptChunkEnd } from "./transcript-chunks.js";
import {
  renderSummarizerInputs,
  renderTranscript,
  type SummarizerInputs,
} from "./transcript-content.js";

/** Why a summary is being made. */
export type SummaryMode = EventData<"summary.started">["mode"];

/** One run of a summarizer directive, as the runtime executes it (a child thread). */
export interface SummarizeCall {
  /** The worker stream and the summarizer thread's id. */
  id: string;
  /** The thread summarized. */
  thread: string;
  summarizer: string;
  inputs: SummarizerInputs;
  signal: AbortSignal;
}

/** What a summary job needs to know about the thread. */
export interface SummaryJob {
  thread: string;
  /** The directive the thread runs (the summarizer's `directive_name`). */
  directive: string;
  summarizer: string;
  maxSummaryTokens: number;
  /** The thread's messages, oldest first, and the summary chain it was seeded with. */
  messages: readonly ContextMessage[];
  chain: readonly SummaryItem[];
  /** The mode of each source the continuity declared, for the summarizer's `sources` input. */
  sourceModes?: ReadonlyMap<string, SourceMode>;
}

/** A summary made, or why there is none. */
export type SummaryOutcome =
  | { ok: true; summary: SummaryItem }
  | {
      ok: false;
      reason: EventData<"summary.failed">["reason"];
      error: { code: string; message: string };
    };

/** Options of `createSummaryWorker`. */
export interface SummaryWorkerOptions {
  store: EventStore;
  continuity: string;
  /** Runs the summarizer; resolves with its final response. */
  summarize: (call: SummarizeCall) => Promise<string>;
  /** Tokens of a text, as the thread's model counts them. */
  countTokens: (text: string) => number;
  /** Milliseconds one summarizer run may take (default 120 000). */
  timeoutMs?: number;
  /**
   * Characters of transcript a summarizer reads at most (default 400 000): what fits its model's
   * window beside its instructions. A longer transcript is read in consecutive runs over whole
   * messages, each an `update` of the one before (`transcriptChunkEnd`), so none is left out.
   */
  maxTranscriptChars?: number | ((summarizer: string) => number);
}

/**
 * The background worker that makes a thread's summaries: a pre-computed one from the
 * pre-compute pressure (`default_compaction`), brought up to date or made at the handoff. Every
 * job is a stream of its own (`summary.started`, then `summary.completed` or `summary.failed`)
 * and a failure never throws into the foreground run: it is an outcome.
 *
 * Contract: at most one job per thread runs at a time (a handoff awaits the one in flight);
 * job ids are `<thread>@summary<n>` with `n` counted per thread, so a replay of the same run
 * makes the same ids; `observe` rebuilds what a crashed process had done from the log.
 */
export interface SummaryWorker {
  /** Starts a pre-compute job for the thread unless one ran or is running. Never throws. */
  precompute(job: SummaryJob): void;
  /**
   * The summary a handoff uses: waits for a job in flight, then brings the newest summary of the
   * thread up to date (an `update` job over the messages after it) or makes one (`handoff`)
   * when there is none. Never throws.
   */
  summaryFor(job: SummaryJob, options?: { upTo?: number }): Promise<SummaryOutcome>;
  /** The newest completed summary of a thread. */
  latest(thread: string): SummaryItem | undefined;
  /** Applies a logged worker event (cold start: what the log already holds). */
  observe(event: SpoolEvent): void;
  /**
   * The jobs (worker stream ids) the observed log shows started and never ended, and that do not
   * run in this worker: a crash cut them off. Meaningful after the log was observed from its start.
   */
  interrupted(): readonly string[];
  /**
   * Ends each of `interrupted` with `summary.failed` (`interrupted`), so every started summary
   * has an end; nothing is run again here (the next handoff asks for the summary it needs).
   */
  recover(): Promise<void>;
  /** Resolves once no job is running. */
  idle(): Promise<void>;
  /** Cancels every job in flight. */
  cancel(reason: string): void;
}

interface ThreadJobs {
  count: number;
  latest?: SummaryItem;
  running?: Promise<SummaryOutcome>;
  precomputed: boolean;
}

/** Creates a summary worker over a store (see `SummaryWorker`). */
export function createSummaryWorker(options: SummaryWorkerOptions): SummaryWorker {
  const { store, continuity } = options;
  const threads = new Map<string, ThreadJobs>();
  const controllers = new Set<AbortController>();
  /** Jobs running in this worker, by id. */
  const live = new Set<string>();
  /** Jobs the observed log started and did not end, by id. */
  const open = new Map<string, EventData<"summary.started">>();
  const interrupted = () => [...open.keys()].filter((id) => !live.has(id));
  const jobsOf = (thread: string) => {
    let found = threads.get(thread);
    if (!found) {
      found = { count: 0, precomputed: false };
      threads.set(thread, found);
    }
    return found;
  };

  const maxCharsOf = (summarizer: string) =>
    typeof options.maxTranscriptChars === "function"
      ? options.maxTranscriptChars(summarizer)
      : (options.maxTranscriptChars ?? 400_000);

  /**
   * A summary of everything after `previous`: one summarizer run when its transcript fits the
   * summarizer's window, else consecutive runs over whole messages, each an update of the one
   * before, so none is left unread (a pre-compute makes only the first; the handoff brings it up
   * to date).
   */
  const run = async (
    job: SummaryJob,
    mode: SummaryMode,
    previous: SummaryItem | undefined,
  ): Promise<SummaryOutcome> => {
    const after = previous ? previous.covers.to_seq : 0;
    const own = job.messages.filter((entry) => entry.seq > after && entry.thread === undefined);
    const carried = previous ? [] : job.messages.filter((entry) => entry.thread !== undefined);
    const input = [...carried, ...own];
    const maxChars = maxCharsOf(job.summarizer);
    const fromSeq = previous
      ? previous.covers.from_seq
      : (own[0]?.seq ?? job.messages[0]?.seq ?? after);
    const toSeq = Math.max(job.messages.at(-1)?.seq ?? after, after);
    let current = previous;
    let start = 0;
    while (true) {
      const base = current ?? job.chain.at(-1);
      const room = maxChars - (base ? base.text.length + TRANSCRIPT_FRAME_CHARS : 0);
      // The messages carried from the thread before are read in the first run, all of them: a
      // summary's range names this thread's messages only (they fit: a seed is half a budget).
      const end = Math.max(
        transcriptChunkEnd(input, start, room),
        start === 0 ? carried.length : 0,
      );
      const lastChunk = end >= input.length;
      const chunk = input.slice(start, end);
      const newestOwn = chunk.filter((entry) => entry.thread === undefined).at(-1)?.seq;
      const outcome = await runOne(
        job,
        current === previous ? mode : "update",
        current,
        chunk,
        {
          thread: job.thread,
          from_seq: fromSeq,
          to_seq: lastChunk ? toSeq : (newestOwn ?? Math.max(0, fromSeq - 1)),
        },
        maxChars,
      );
      // A pre-compute runs beside the foreground: one run, so that what it starts (and the step
      // its summarizer is a child of) is decided where the hook fired; the handoff, which the
      // foreground waits for, reads the rest.
      if (!outcome.ok || lastChunk || mode === "precompute") return outcome;
      current = outcome.summary;
      start = end;
    }
  };

  /** One summarizer run over `messages`, building on `previous` (or the chain's newest). */
  const runOne = async (
    job: SummaryJob,
    mode: SummaryMode,
    previous: SummaryItem | undefined,
    messages: readonly ContextMessage[],
    covers: SeqRange,
    maxChars: number,
  ): Promise<SummaryOutcome> => {
    const jobs = jobsOf(job.thread);
    jobs.count += 1;
    const id = `${job.thread}@summary${jobs.count}`;
    const stream = { kind: "worker" as const, id };
    const transcript = transcriptOf(previous ?? job.chain.at(-1), messages, maxChars);
    // What the summary covers of each source: the delivery turns it reads in its own range, and
    // those of the summary it brings up to date (always this thread's).
    const sources = mergeSpans([
      ...(previous?.sources ?? []),
      ...deliveredSpans(messages.filter((entry) => entry.thread === undefined)),
    ]);
    await store.append({
      continuity,
      stream,
      type: "summary.started",
      data: {
        thread: job.thread,
        summarizer: job.summarizer,
        mode,
        covers,
        attempt: jobs.count,
        ...(previous ? { previous: previous.id } : {}),
      },
    });
    const controller = new AbortController();
    controllers.add(controller);
    live.add(id);
    const timeoutMs = options.timeoutMs ?? 120_000;
    const timer = setTimeout(() => controller.abort(new TimeoutMarker(timeoutMs)), timeoutMs);
    let outcome: SummaryOutcome;
    try {
      const text = (
        await options.summarize({
          id,
          thread: job.thread,
          summarizer: job.summarizer,
          inputs: renderSummarizerInputs({
            transcript,
            directiveName: job.directive,
            maxSummaryTokens: job.maxSummaryTokens,
            sources: renderSourcesInput(deliveredSpans(messages), job.sourceModes),
          }),
          signal: controller.signal,
        })
      ).trim();
      if (controller.signal.aborted) throw controller.signal.reason;
      if (text === "") {
        outcome = {
          ok: false,
          reason: "empty",
          error: {
            code: "summary.empty",
            message: `${job.summarizer} answered with an empty summary`,
          },
        };
      } else {
        const { text: bounded, truncated } = bound(text, job.maxSummaryTokens, options.countTokens);
        const bytes = Buffer.from(bounded, "utf8");
        const artifact = await store.artifacts.put(bytes, { mediaType: "text/markdown" });
        const summary: SummaryItem = {
          id,
          summarizer: job.summarizer,
          text: bounded,
          tokens: options.countTokens(bounded),
          covers,
          ...(sources.length > 0 ? { sources } : {}),
        };
        await store.append({
          continuity,
          stream,
          type: "summary.completed",
          data: {
            id,
            thread: job.thread,
            summarizer: job.summarizer,
            mode,
            covers,
            text: bounded,
            tokens: summary.tokens,
            artifact: { hash: artifact.hash, size: artifact.size, media_type: "text/markdown" },
            ...(truncated ? { truncated: true } : {}),
            ...(previous ? { previous: previous.id } : {}),
            ...(sources.length > 0 ? { sources: sources.map(spanToData) } : {}),
          },
        });
        jobs.latest = summary;
        return { ok: true, summary };
      }
    } catch (error) {
      const reason = controller.signal.aborted
        ? controller.signal.reason instanceof TimeoutMarker
          ? "timeout"
          : "cancelled"
        : "error";
      outcome = {
        ok: false,
        reason,
        error: {
          code:
            reason === "timeout"
              ? "summary.timeout"
              : reason === "cancelled"
                ? "summary.cancelled"
                : errorCodeOf(error, "summary.error"),
          message:
            reason === "timeout"
              ? `${job.summarizer} did not finish in ${timeoutMs} ms`
              : describeError(reason === "cancelled" ? controller.signal.reason : error),
        },
      };
    } finally {
      clearTimeout(timer);
      controllers.delete(controller);
      live.delete(id);
    }
    await store.append({
      continuity,
      stream,
      type: "summary.failed",
      data: {
        thread: job.thread,
        summarizer: job.summarizer,
        mode,
        attempt: jobs.count,
        reason: outcome.reason,
        error: outcome.error,
      },
    });
    return outcome;
  };

  const track = (jobs: ThreadJobs, promise: Promise<SummaryOutcome>) => {
    const settled = promise.catch(
      (error): SummaryOutcome => ({
        ok: false,
        reason: "error",
        error: { code: "summary.error", message: describeError(error) },
      }),
    );
    jobs.running = settled;
    void settled.then(() => {
      if (jobs.running === settled) jobs.running = undefined;
    });
    return settled;
  };

  return {
    precompute(job) {
      const jobs = jobsOf(job.thread);
      if (jobs.running || jobs.precomputed) return;
      jobs.precomputed = true;
      void track(jobs, run(job, "precompute", undefined));
    },
    async summaryFor(job, options = {}) {
      const { upTo } = options;
      const jobs = jobsOf(job.thread);
      if (jobs.running !== undefined) await jobs.running;
      const latest = jobs.latest;
      const newest = job.messages.filter((entry) => entry.thread === undefined).at(-1)?.seq ?? 0;
      const needed = upTo ?? newest;
      if (latest && latest.covers.to_seq >= needed) return { ok: true, summary: latest };
      return track(jobs, run(job, latest ? "update" : "handoff", latest));
    },
    latest: (thread) => threads.get(thread)?.latest,
    observe(event) {
      if (event.stream.kind !== "worker") return;
      if (event.type === "summary.started") {
        const data = event.data as EventData<"summary.started">;
        const jobs = jobsOf(data.thread);
        jobs.count = Math.max(jobs.count, data.attempt);
        if (data.mode === "precompute") jobs.precomputed = true;
        open.set(event.stream.id, data);
      } else if (event.type === "summary.failed") {
        open.delete(event.stream.id);
      } else if (event.type === "summary.completed") {
        open.delete(event.stream.id);
        const data = event.data as EventData<"summary.completed">;
        jobsOf(data.thread).latest = {
          id: data.id,
          summarizer: data.summarizer,
          text: data.text,
          tokens: data.tokens,
          covers: data.covers,
          ...(data.sources ? { sources: data.sources.map(spanFromData) } : {}),
        };
      }
    },
    interrupted,
    async recover() {
      const ended = interrupted();
      // One commit for all of them: they end together, before any run goes on.
      await store.appendBatch(
        ended.map((id) => {
          const started = open.get(id)!;
          return {
            continuity,
            stream: { kind: "worker" as const, id },
            type: "summary.failed",
            data: {
              thread: started.thread,
              summarizer: started.summarizer,
              mode: started.mode,
              attempt: started.attempt,
              reason: "interrupted",
              error: {
                code: "summary.interrupted",
                message:
                  "a restart cut this summary off before it ended; nothing it did is used, and the next handoff makes the summary it needs",
              },
            },
          };
        }),
      );
      for (const id of ended) open.delete(id);
    },
    async idle() {
      while (true) {
        const running = [...threads.values()].map((jobs) => jobs.running).filter(Boolean);
        if (running.length === 0) return;
        await Promise.all(running);
      }
    },
    cancel(reason) {
      for (const controller of controllers) controller.abort(reason);
    },
  };
}

class TimeoutMarker {
  constructor(readonly ms: number) {}
}

/** The transcript a summarizer reads: the summary it builds on, then the messages after it. */
function transcriptOf(
  previous: SummaryItem | undefined,
  messages: readonly ContextMessage[],
  maxChars: number,
): string {
  const body = renderTranscript(
    messages.map((entry) => entry.message as ProviderMessage),
    { maxChars: Math.max(1000, maxChars - (previous?.text.length ?? 0)) },
  );
  return previous
    ? `## Summary of the work before this transcript\n\n${previous.text.trim()}\n\n## Transcript since then\n\n${body}`
    : body;
}

/** Cuts a summary to its token budget (at a line end when it can), saying it was cut. */
function bound(
  text: string,
  maxTokens: number,
  count: (text: string) => number,
): { text: string; truncated: boolean } {
  if (count(text) <= maxTokens) return { text, truncated: false };
  let low = 0;
  let high = text.length;
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (count(text.slice(0, mid)) <= maxTokens - 8) low = mid;
    else high = mid - 1;
  }
  const cut = text.lastIndexOf("\n", low);
  const kept = text.slice(0, cut > low / 2 ? cut : low).trimEnd();
  return { text: `${kept}\n\n[summary cut to ${maxTokens} tokens]`, truncated: true };
}

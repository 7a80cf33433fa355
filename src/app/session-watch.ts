import { isAbsolute, resolve } from "node:path";
import type { BrowserRelic } from "../browser/index.js";
import {
  type AgentWatchSettings,
  createWatchModel,
  directoryFrames,
  FrameError,
  type FrameSourceHooks,
  FrameStorage,
  type FrameWatch,
  framesFolder,
  type IncomingFrame,
  isScreenQuestion,
  latestFramePath,
  type PushFrameSource,
  pushFrameSource,
  type ScoredFrame,
  StreamWatch,
  screencastFrames,
  videoFrames,
  type WatchActivity,
  type WatchCallTarget,
  type WatchSourceConfig,
  watchFrames,
} from "../frames/index.js";
import type { EventStore } from "../log/index.js";
import {
  createModelCatalogue,
  createProvider,
  type Provider,
  resolveProviderSettings,
} from "../providers/index.js";
import {
  type AgentRuntime,
  ConversationTail,
  type RuntimeWatch,
  type TurnAttachment,
  withArtifactImages,
} from "../runtime/index.js";

/** A stream watch running beside a session's runtime (docs/stream-watch.md). */
export interface SessionWatch {
  /** The note-taker and commentary loops. */
  readonly watch: StreamWatch;
  /** The scored frames of the source (its storage holds the latest frame). */
  readonly frames: FrameWatch;
  /** The source a caller feeds, for `source: { push: true }`. */
  readonly push?: PushFrameSource;
  /** Resolves once the source ended (or was stopped) and `watch.stopped` is logged. */
  readonly done: Promise<void>;
  /** Resolves with the first scored frame, or `undefined` when the source ended without one. */
  readonly firstFrame: Promise<ScoredFrame | undefined>;
  /**
   * Looks again at the latest frame when no new frame came (a static screen sends none): the
   * note-taker decides as for a static frame at `now`. The session's idle timer calls it.
   */
  tick(now: number): Promise<void>;
  /** Stops the source and the loops; resolves once `watch.stopped` is logged. */
  stop(): Promise<void>;
}

/** What `startSessionWatch` needs. */
export interface SessionWatchOptions {
  store: EventStore;
  continuity: string;
  workspace: string;
  env: Record<string, string | undefined>;
  settings: AgentWatchSettings & { source: WatchSourceConfig };
  runtime: Pick<AgentRuntime, "activity">;
  /** The agent's provider and model: notes and commentary use them unless the settings say otherwise. */
  provider: Provider;
  model: string;
  instructions?: string;
  /** The agent's browser relic, for a `screencast` source. */
  browser?: BrowserRelic;
  /** The most tokens of recent conversation a commentary is given (default 1,500). */
  conversationTokens?: number;
  /** Frame times and the idle timer's clock (default `Date.now`). */
  clock?: () => number;
  onError?: (error: unknown) => void;
}

/**
 * Starts a session's stream watch: the configured frame source through `watchFrames` (frames
 * kept as artifacts of the store, the latest written under `.spool/frames/<continuity>/`), the
 * `StreamWatch` loops over its scored frames, their calls through providers resolved like the
 * agent's (`noteProvider`/`noteModel`, `commentaryProvider`/`commentaryModel`, else the agent's
 * own), the commentary gates reading the continuity's log and the runtime's `activity`
 * (`sessionActivity`), and the commentary given the recent conversation (`ConversationTail`).
 * A bad provider setting rejects with its `ConfigError` before anything starts.
 */
export async function startSessionWatch(options: SessionWatchOptions): Promise<SessionWatch> {
  const { store, continuity, settings } = options;
  const clock = options.clock ?? Date.now;
  const stop = new AbortController();
  const folder = framesFolder(options.workspace, continuity);
  const storage = new FrameStorage({ artifacts: store.artifacts, folder });
  const sourceId = sourceName(settings.source);
  const push =
    settings.source.kind === "push" ? pushFrameSource({ source: sourceId, clock }) : undefined;
  const frames = watchFrames({
    source: sourceId,
    open: (hooks) => openSource(options, settings.source, hooks, clock, push),
    storage,
    log: { store, continuity },
    overflow: settings.source.kind === "directory" ? "wait" : "latest",
    signal: stop.signal,
  });
  const model = createWatchModel({
    note: callTarget(options, settings.settings.noteProvider, settings.settings.noteModel),
    commentary: callTarget(
      options,
      settings.settings.commentaryProvider,
      settings.settings.commentaryModel,
    ),
    signal: stop.signal,
  });
  const tail = new ConversationTail({
    store,
    continuity,
    model: settings.settings.commentaryModel ?? options.model,
    ...(options.conversationTokens !== undefined ? { maxTokens: options.conversationTokens } : {}),
  });
  const watch = await StreamWatch.open({
    store,
    continuity,
    source: sourceId,
    model,
    settings: settings.settings,
    ...(settings.migrated.length > 0 ? { migrated: [...settings.migrated] } : {}),
    hooks: {
      noted: (frame) => frames.noted(frame),
      keep: async (frame) => {
        await frames.keep(frame);
      },
    },
    activity: () => sessionActivity(options.runtime, tail, continuity),
    conversation: () => tail.conversation(),
    ...(options.instructions ? { instructions: options.instructions } : {}),
    framePath: (frame) => latestFramePath(folder, frame.source, frame.mime),
    ...(options.onError ? { onError: options.onError } : {}),
  });
  let first: (frame: ScoredFrame | undefined) => void = () => {};
  const firstFrame = new Promise<ScoredFrame | undefined>((resolve) => {
    first = resolve;
  });
  const done = watch.run(tapFirst(frames, first), stop.signal).finally(() => first(undefined));
  return {
    watch,
    frames,
    ...(push ? { push } : {}),
    done,
    firstFrame,
    tick: (now) => watch.tick(now),
    async stop() {
      stop.abort("the session closed");
      push?.end();
      await done;
    },
  };
}

/**
 * The commentary gates' view of the conversation: this runtime's own runs and queue (known at
 * once) and what the continuity's log says of every writer (a turn another process appended, a
 * run another process holds the lease for). Busy when either is; the newest turn of either.
 */
export async function sessionActivity(
  runtime: Pick<AgentRuntime, "activity">,
  tail: ConversationTail,
  continuity: string,
): Promise<WatchActivity> {
  const own = runtime.activity(continuity);
  const logged = await tail.activity();
  const times = [own.lastTurnAt, logged.lastTurnAt].filter((at) => at !== undefined);
  return {
    foregroundBusy: own.busy || logged.busy,
    ...(times.length > 0 ? { lastUserInputAt: Math.max(...times) } : {}),
  };
}

/** How long a screen question asked before the first frame waits for it (ms). */
export const FIRST_FRAME_WAIT_MS = 5_000;

/**
 * The `RuntimeWatch` of a session: the notes of its watch (none before it started), and the
 * latest frame, kept as an artifact, for a turn `isScreenQuestion` matches. A screen question
 * asked while the watch is starting (`spool run --prompt` right after the session opened) waits
 * for the first frame, at most `FIRST_FRAME_WAIT_MS`, rather than answering blind.
 */
export function runtimeWatchOf(
  current: () => SessionWatch | undefined,
  starting: () => Promise<SessionWatch | undefined> | undefined,
): RuntimeWatch {
  return {
    notes: () => current()?.watch.notesText() ?? "",
    async attach(_continuity, text): Promise<TurnAttachment[]> {
      if (!isScreenQuestion(text)) return [];
      const running = current() ?? (await starting());
      if (!running) return [];
      if (!running.watch.latest) await within(running.firstFrame, FIRST_FRAME_WAIT_MS);
      const latest = running.watch.latest?.frame ?? running.frames.latest()?.frame;
      if (!latest) return [];
      await running.frames.keep(latest);
      return [{ hash: latest.hash, size: latest.bytes, media_type: latest.mime, name: "screen" }];
    },
  };
}

/** Passes `frames` on, telling `first` of the first one. */
async function* tapFirst(
  frames: AsyncIterable<ScoredFrame>,
  first: (frame: ScoredFrame) => void,
): AsyncGenerator<ScoredFrame> {
  for await (const frame of frames) {
    first(frame);
    yield frame;
  }
}

/** Resolves when `promise` does or after `ms`, whichever comes first (the timer never holds the process). */
async function within(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
    timer.unref();
  });
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** The source's id on its frames and events: `screen`, `tab:<id>`, `video`, `push`. */
function sourceName(source: WatchSourceConfig): string {
  switch (source.kind) {
    case "screencast":
      return source.tab !== undefined ? `tab:${source.tab}` : "screen";
    case "directory":
      return "frames";
    default:
      return source.kind;
  }
}

function openSource(
  options: SessionWatchOptions,
  source: WatchSourceConfig,
  hooks: FrameSourceHooks,
  clock: () => number,
  push: PushFrameSource | undefined,
): AsyncIterable<IncomingFrame> {
  const at = (path: string) => (isAbsolute(path) ? path : resolve(options.workspace, path));
  switch (source.kind) {
    case "directory":
      return directoryFrames({
        ...hooks,
        clock,
        directory: at(source.directory),
        ...(source.follow ? { watch: true } : {}),
      });
    case "video":
      return videoFrames({
        ...hooks,
        clock,
        input: /^[a-z][a-z0-9+.-]*:\/\//i.test(source.input) ? source.input : at(source.input),
        ...(source.fps !== undefined ? { fps: source.fps } : {}),
        ...(source.live !== undefined ? { live: source.live } : {}),
      });
    case "screencast":
      return screencastOf(options.browser, source.tab, hooks, clock);
    default:
      return push!.frames({ signal: hooks.signal, onEvent: hooks.onEvent });
  }
}

async function* screencastOf(
  browser: BrowserRelic | undefined,
  tab: string | undefined,
  hooks: FrameSourceHooks,
  clock: () => number,
): AsyncGenerator<IncomingFrame> {
  if (!browser) {
    throw new FrameError(
      "frame.bad-option",
      "a screencast source needs the agent's browser, and this agent has none",
      { hint: "Add a browser: section to the agent's manifest, or watch another source" },
    );
  }
  const page = await browser.page(tab);
  yield* screencastFrames({ ...hooks, clock, page });
}

/** The provider and model of one kind of watch call, resolved as the app resolves the agent's. */
function callTarget(
  options: SessionWatchOptions,
  provider: string | undefined,
  model: string | undefined,
): WatchCallTarget {
  const { store } = options;
  if (provider === undefined || provider === options.provider.name) {
    return {
      provider: withArtifactImages(options.provider, store.artifacts),
      model: model ?? options.model,
    };
  }
  const catalogue = createModelCatalogue();
  const settings = resolveProviderSettings(
    { provider, ...(model !== undefined ? { model } : {}) },
    options.env,
    { catalogue },
  );
  return {
    provider: withArtifactImages(createProvider(settings, { catalogue }), store.artifacts),
    model: settings.model,
  };
}

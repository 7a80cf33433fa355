import type { AnyInternalAction } from "../actions/index.js";
import { textTokens } from "../continuity/index.js";
import { recallSourceLines, type SourceDefinition, sourceEntryOf } from "../sources/index.js";
import { canonicalJson, SpoolError, type SpoolEvent } from "../spec/index.js";
import { ActorRosters } from "./actor-access.js";
import { notify } from "./agent-step.js";
import type { ContinuitySession } from "./continuity-session.js";
import { describeSources, type SourceControl, sourceActions } from "./source-actions.js";
import { SourceChanges } from "./source-changes.js";
import type { RuntimeSources, SourcesView } from "./source-config.js";
import {
  fireDeliveryHooks,
  planDelivery,
  SOURCE_ORIGIN,
  SOURCES_ACTOR,
  sourceActor,
} from "./source-delivery.js";
import { SOURCE_FOLD_TYPES, SourceFold } from "./source-fold.js";
import { SourceRunners } from "./source-runners.js";

/** The sources of `session` as the CLI sees them: none, when the runtime has no sources. */
export function sourcesView(session: ContinuitySession): SourcesView {
  const sources = session.sources;
  if (sources) return sources.view();
  return {
    states: () => [],
    async untilExhausted(signal) {
      while (session.running !== undefined || session.waiting > 0) {
        signal?.throwIfAborted();
        await session.chain;
      }
    },
  };
}

/** Statuses in which a source reads no more on its own. */
const DONE = new Set(["exhausted", "failed", "paused", "removed"]);

/**
 * The sources of one continuity's session. The log is the truth: the fold (`SourceFold`) catches
 * up with it before every decision. Live (no replay world), taking the continuity up appends
 * `source.added` (`by: "manifest"`) for each manifest definition the log lacks or has otherwise
 * (and `source.removed` for a manifest source the manifest dropped), adds the sources' actors to
 * an access list the continuity keeps, and starts a runner for every active (or failed) source,
 * its access checked first: a denial is a final `source.failed`, never a crash. Whenever the
 * continuity is idle and something is to deliver, one delivery turn is appended and run on the
 * session's chain; a dataset's runner reads chunk n only once chunk n-1 was delivered. In replay
 * nothing is started or appended: the copied delivery turns run, and their hooks fire, the same.
 */
export class SessionSources implements SourceControl {
  readonly #session: ContinuitySession;
  readonly #config: RuntimeSources;
  readonly #live: boolean;
  /** The sources as the log has them (see `current` for a caught-up one). */
  fold = new SourceFold();
  readonly #runners: SourceRunners;
  #catching: Promise<unknown> = Promise.resolve();
  #observed = 0;
  #takenUp: Promise<void> | undefined;
  /** The fold's position when the continuity was taken up: turns after it are this runtime's to run. */
  #takenUpAt = Number.POSITIVE_INFINITY;
  #closed = false;
  /** A delivery check waits on the session's chain. */
  #scheduled = false;
  /** A delivery check is running. */
  #delivering = false;
  #changed: (() => void)[] = [];
  #actions: AnyInternalAction[] | undefined;

  constructor(session: ContinuitySession, config: RuntimeSources) {
    this.#session = session;
    this.#config = config;
    this.#live = session.shared.options.world === undefined;
    this.#runners = new SourceRunners({
      store: session.shared.options.store,
      continuity: session.continuity,
      config,
      fold: () => this.fold,
      next: (signal) => this.#next(signal),
      changed: () => {
        this.pump();
        this.#notify();
      },
    });
  }

  /** Applies an event of a read of the whole log (the session's load); a new read starts afresh. */
  observe(event: SpoolEvent): void {
    if (event.seq <= this.#observed) this.fold = new SourceFold();
    this.#observed = event.seq;
    this.fold.apply(event);
  }

  /** The fold, caught up with the log (reads only the events after the last one it applied). */
  current(): Promise<SourceFold> {
    const { store } = this.#session.shared.options;
    const next = this.#catching.then(async () => {
      for await (const event of store.read({
        continuity: this.#session.continuity,
        types: SOURCE_FOLD_TYPES,
        after: this.fold.seq,
      })) {
        this.fold.apply(event);
      }
      return this.fold;
    });
    this.#catching = next.catch(() => undefined);
    return next;
  }

  /** Takes the continuity's sources up, once (see the class); nothing in replay. */
  takeUp(): Promise<void> {
    if (!this.#live || this.#closed) return Promise.resolve();
    this.#takenUp ??= this.#takeUp();
    return this.#takenUp;
  }

  async #takeUp(): Promise<void> {
    const fold = await this.current();
    this.#takenUpAt = fold.seq;
    await this.#reconcile(fold);
    await this.current();
    await this.#addActors();
    for (const [id, state] of this.fold.state.sources) {
      if (state.status === "active" || state.status === "failed") await this.#start(id);
    }
    this.pump();
  }

  /** Appends what the manifest changed since the log's view of its sources. */
  async #reconcile(fold: SourceFold): Promise<void> {
    const declared = new Set<string>();
    for (const definition of this.#config.manifest.definitions) {
      declared.add(definition.id);
      const known = fold.source(definition.id)?.definition;
      const entry = sourceEntryOf(definition);
      if (known && canonicalJson(sourceEntryOf(known)) === canonicalJson(entry)) continue;
      await this.#append(definition.id, "source.added", {
        source_id: definition.id,
        definition: entry,
        by: "manifest",
      });
    }
    for (const [id, state] of fold.state.sources) {
      if (declared.has(id) || state.status === "removed" || fold.addedBy(id) !== "manifest") {
        continue;
      }
      await this.#append(id, "source.removed", { source_id: id, by: "manifest" });
    }
  }

  /**
   * Adds `source:<id>` (and `sources`) to the continuity's access list, when it keeps one and
   * does not have them (nor had them removed).
   */
  async #addActors(ids?: readonly string[]): Promise<void> {
    const { store } = this.#session.shared.options;
    const roster = await new ActorRosters(store).roster(this.#session.continuity);
    if (!roster.listed) return;
    const sources =
      ids ??
      [...this.fold.state.sources.values()]
        .filter((state) => state.status !== "removed")
        .map((state) => state.id);
    const actors = new Set([...sources.map(sourceActor), SOURCES_ACTOR]);
    for (const actor of actors) {
      // An actor an owner removed stays removed: its turns are refused until it is added again.
      if (roster.actors.has(actor) || roster.removed.has(actor)) continue;
      await store.append({
        continuity: this.#session.continuity,
        type: "actor.added",
        actor: "spool",
        origin: "runtime",
        data: { actor_id: actor, kind: "source", access: "write" },
      });
    }
  }

  /** Starts `id`'s runner (live only). */
  async #start(id: string): Promise<void> {
    if (this.#live && !this.#closed) await this.#runners.start(id);
  }

  /**
   * Checks, on the session's chain (so after any run going and before the turns queued after it),
   * whether something is to deliver; once at a time. Nothing in replay or once closing.
   */
  pump(): void {
    if (!this.#live || this.#closed || this.#scheduled || this.#takenUp === undefined) return;
    this.#scheduled = true;
    void this.#session
      .onChain(async () => {
        this.#scheduled = false;
        this.#delivering = true;
        try {
          await this.#deliver();
        } finally {
          this.#delivering = false;
        }
      })
      .catch(() => undefined)
      .finally(() => this.#notify());
  }

  /** Appends and runs one delivery turn when the continuity is idle and something is ready. */
  async #deliver(): Promise<void> {
    const session = this.#session;
    if (this.#closed) return;
    if (session.waiting > 0) {
      // Turns are queued: they go first, and the check comes again after them.
      this.pump();
      return;
    }
    const fold = await this.current();
    // A turn appended and not run yet goes first too: its run checks again when it starts.
    if (fold.waitingAfter(this.#takenUpAt).length > 0) return;
    const ready = fold.deliverable();
    if (ready.length === 0) return;
    const { options } = session.shared;
    const model = options.agent.model;
    const estimator = session.estimator ?? session.background;
    const plan = await planDelivery({
      store: options.store,
      continuity: session.continuity,
      ready,
      budgetTokens: this.#config.digestTokens ?? this.#defaultBudget(model),
      estimate: (text) => textTokens(estimator, model, text),
    });
    if (this.#closed) return;
    const id = session.shared.ownTurn?.();
    const clock = this.#config.clock;
    const event = await options.store.append({
      ...(id !== undefined ? { id } : {}),
      ...(clock ? { ts: new Date(clock()).toISOString() } : {}),
      continuity: session.continuity,
      type: "turn.added",
      actor: plan.actor,
      origin: SOURCE_ORIGIN,
      data: {
        text: plan.text,
        sources: plan.sources,
        ...(plan.ends.length > 0 ? { ends: plan.ends } : {}),
      },
    });
    notify(options.observer, {
      type: "turn-received",
      continuity: session.continuity,
      turn: event.id,
      actor: plan.actor,
      text: plan.text,
      origin: SOURCE_ORIGIN,
      delivery: { sources: plan.sources, ends: plan.ends },
    });
    await this.current();
    this.#notify();
    await this.#runInOrder(event.id);
  }

  /**
   * Runs the delivery turn `turn` here on the chain, after the turns appended before it (a user
   * turn can land between the check and the delivery's append): in log order, as a replay runs
   * them. A turn whose run is queued already (behind this job) takes the delivery along behind it.
   */
  async #runInOrder(turn: string): Promise<void> {
    const session = this.#session;
    const { runs } = session.shared;
    for (const before of this.fold.waitingAfter(this.#takenUpAt)) {
      if (before === turn) break;
      if (runs.has(before)) {
        void session.enqueue(turn).catch(() => undefined);
        return;
      }
      const run = session.runTurnNow(before);
      runs.set(before, run);
      await run.catch(() => undefined);
    }
    const run = session.runTurnNow(turn);
    runs.set(turn, run);
    await run.catch(() => undefined);
  }

  #defaultBudget(model: string): number {
    const window = this.#session.windows.known(model).contextWindow;
    return Math.max(256, Math.min(4_000, Math.floor(window / 10)));
  }

  /**
   * As a turn's run starts in `thread`: fires a delivery turn's stream hooks (live and replay
   * alike), and (live) puts the next delivery check behind the run.
   */
  async beforeRun(turn: string, thread: string): Promise<void> {
    this.pump();
    let record = this.fold.delivery(turn);
    if (!record) record = (await this.current()).delivery(turn);
    if (!record) return;
    this.fold.take(turn);
    await fireDeliveryHooks(this.#session.driver, record, thread);
  }

  /** The agent's source actions (see `sourceActions`). */
  actions(): AnyInternalAction[] {
    this.#actions ??= sourceActions(this.#actionsConfig(), this);
    return this.#actions;
  }

  /** The system prompt's "Sources" section (see `describeSources`). */
  describe(): string {
    return describeSources(this.#actionsConfig());
  }

  #actionsConfig() {
    const { manifest, access, manifestFile } = this.#config;
    return { manifest, access, ...(manifestFile !== undefined ? { manifestFile } : {}) };
  }

  /** `source.add`: logs the model's source; live, adds its actor and starts it. */
  add(definition: SourceDefinition, actionId: string): Promise<void> {
    return this.addBy(definition, { by: "action", action_id: actionId });
  }

  /** `source.pause`: stops the runner, then logs the pause (nothing is read after it). */
  pause(id: string, actionId: string, reason: string | undefined): Promise<void> {
    return this.pauseBy(id, { by: "action", action_id: actionId }, reason);
  }

  /** `source.resume`: logs it; live, starts the runner from the source's cursor. */
  resume(id: string, actionId: string): Promise<void> {
    return this.resumeBy(id, { by: "action", action_id: actionId });
  }

  /** `source.remove`: stops the runner, then logs the removal. */
  remove(id: string, actionId: string): Promise<void> {
    return this.removeBy(id, { by: "action", action_id: actionId });
  }

  /** Logs `definition` as added by `who`; live, adds its actor and starts it. */
  async addBy(definition: SourceDefinition, who: SourceChangeBy): Promise<void> {
    await this.#append(
      definition.id,
      "source.added",
      { source_id: definition.id, definition: sourceEntryOf(definition) },
      who,
    );
    if (!this.#live) return;
    await this.#addActors([definition.id]);
    await this.current();
    await this.#start(definition.id);
  }

  /** Stops `id`'s runner, then logs its pause by `who` (nothing is read after it). */
  async pauseBy(id: string, who: SourceChangeBy, reason?: string): Promise<void> {
    await this.#runners.stop(id);
    await this.#append(
      id,
      "source.paused",
      { source_id: id, ...(reason !== undefined ? { reason } : {}) },
      who,
    );
  }

  /** Logs `id`'s resumption by `who`; live, starts its runner from its cursor. */
  async resumeBy(id: string, who: SourceChangeBy): Promise<void> {
    await this.#append(id, "source.resumed", { source_id: id }, who);
    await this.current();
    await this.#start(id);
  }

  /** Stops `id`'s runner, then logs its removal by `who`. */
  async removeBy(id: string, who: SourceChangeBy): Promise<void> {
    await this.#runners.stop(id);
    await this.#append(id, "source.removed", { source_id: id }, who);
  }

  /** The access policy new sources are checked against (the manifest's lists, the workspace). */
  get access(): RuntimeSources["access"] {
    return this.#config.access;
  }

  /** `source.recall`: reads the range from the log (`recallSourceLines`). */
  recall: SourceControl["recall"] = (query) =>
    recallSourceLines(this.#session.shared.options.store, this.#session.continuity, query);

  /** The CLI's view (see `SourcesView`). */
  view(): SourcesView {
    return {
      states: () => [...this.fold.state.sources.values()],
      untilExhausted: (signal) => this.#untilExhausted(signal),
      changes: new SourceChanges(this),
    };
  }

  async #untilExhausted(signal?: AbortSignal): Promise<void> {
    if (this.#live && this.#takenUp === undefined) {
      throw new SpoolError(
        "sources.not-taken-up",
        `this runtime has not taken continuity ${this.#session.continuity} up, so its sources do not run`,
        { hint: "Call submit, accept or resume on the continuity first" },
      );
    }
    await this.#takenUp;
    while (true) {
      signal?.throwIfAborted();
      const next = this.#next(signal);
      next.catch(() => undefined);
      const fold = await this.current();
      const sourcesDone = [...fold.state.sources.values()].every((state) => DONE.has(state.status));
      if (sourcesDone && fold.deliverable().length === 0) {
        const session = this.#session;
        const idle =
          session.running === undefined &&
          session.waiting === 0 &&
          !this.#scheduled &&
          !this.#delivering;
        if (idle) return;
        await Promise.race([session.chain, next]);
        continue;
      }
      await next;
    }
  }

  /** Resolves at the next change (a chunk appended, a runner ended, a delivery checked). */
  #next(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const done = () => {
        signal?.removeEventListener("abort", aborted);
        resolve();
      };
      const aborted = () => {
        this.#changed = this.#changed.filter((waiter) => waiter !== done);
        reject(signal?.reason);
      };
      if (signal?.aborted) return reject(signal.reason);
      signal?.addEventListener("abort", aborted, { once: true });
      this.#changed.push(done);
    });
  }

  #notify(): void {
    const waiters = this.#changed;
    this.#changed = [];
    for (const waiter of waiters) waiter();
  }

  /** Stops every runner (before the session's lease is released); no delivery after it. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#runners.close();
    this.#notify();
  }

  async #append(
    id: string,
    type: SourceEventType,
    data: Record<string, unknown>,
    who?: SourceChangeBy,
  ): Promise<void> {
    const marks =
      who === undefined
        ? {}
        : who.by === "action"
          ? { by: who.by, action_id: who.action_id }
          : { by: who.by };
    await this.#session.shared.options.store.append({
      continuity: this.#session.continuity,
      stream: { kind: "source", id },
      type,
      ...(who !== undefined && who.by !== "action" ? { actor: who.actor, origin: who.origin } : {}),
      data: { ...data, ...marks },
    });
  }
}

/**
 * Who changed a source, as its event records it: an internal action of the model (with its id),
 * or a person through the API or the CLI (their actor and the request's origin on the event).
 */
export type SourceChangeBy =
  | { by: "action"; action_id: string }
  | { by: "http" | "cli" | "runtime"; actor: string; origin: string };

type SourceEventType =
  | "source.added"
  | "source.removed"
  | "source.paused"
  | "source.resumed"
  | "source.failed";

import {
  type AgentSession,
  type AgentSessionOptions,
  foregroundDirective,
  openAgentSession,
} from "../app/index.js";
import { createItemSpace } from "../directives/index.js";
import type { EventStore } from "../log/index.js";
import type { Provider } from "../providers/index.js";
import {
  ActorRosters,
  ContinuityLiveError,
  type LeaseOptions,
  type RunNotice,
  type RunObserver,
  type ThreadRunResult,
  type TurnInput,
} from "../runtime/index.js";
import type { EventData, SpoolEvent } from "../spec/index.js";
import { ServerError } from "./server-error.js";

/** What a turn that arrives while a run is going does. */
export type TurnPolicy = EventData<"policy.set">["policy"];

/** Options of `AgentHost`. */
export interface AgentHostOptions {
  store: EventStore;
  /** The workspace agents are assembled from (its `.ai/` items, `config.yaml`). */
  workspace: string;
  /** The environment the provider is configured from (`OPENAI_BASE_URL`, keys, …). */
  env: Record<string, string | undefined>;
  /** The lease every continuity it runs is held with (one owner among processes). */
  lease: LeaseOptions;
  /** A provider instead of the environment's (embedding and tests). */
  provider?: Provider;
  /** Write each thread's transcript and knowledge files here (`resolveThreadsDir`). */
  threadsDir?: string;
  /**
   * Opens the session of `continuity` with `options` (default: the app's `openAgentSession`
   * over the options above). `spool serve` passes the CLI's, so a run served over HTTP has the
   * same tools (the agent's MCP servers, memory) as the same run in `spool chat` and its replay.
   */
  openSession?: (continuity: string, options: AgentSessionOptions) => Promise<AgentSession>;
}

/** A turn the host appended, and its run when this process runs it. */
export interface AcceptedTurn {
  event: SpoolEvent;
  /** The run of the turn; absent when another process owns the continuity and runs it. */
  run?: Promise<ThreadRunResult>;
}

interface Hosted {
  session: AgentSession | undefined;
  /** Another process held the lease when this one asked: it runs the turns. */
  elsewhere: boolean;
  listeners: Set<RunObserver>;
  /** Turns accepted here whose runs have not ended. */
  running: Set<string>;
}

/**
 * The agents the service runs: one `AgentSession` per continuity it touches (assembled with the
 * continuity's agent manifest, as `spool resume` assembles it), holding the continuity's lease so
 * no other process runs it at the same time. A continuity another process owns is left to it: its
 * turns are appended and that process runs them.
 *
 * Guarantees: a turn is appended only after the continuity's access list accepts its actor and its
 * turn policy allows it (`reject` refuses a turn while one runs here: `turn.rejected`, 409;
 * `interrupt` cancels the run going on first); each turn is run once (the runtime dedupes a turn
 * its lease follower also sees). Listeners hear the run notices of their continuity live.
 */
export class AgentHost {
  readonly #options: AgentHostOptions;
  readonly #rosters: ActorRosters;
  readonly #hosted = new Map<string, Promise<Hosted>>();
  #closed = false;

  constructor(options: AgentHostOptions) {
    this.#options = options;
    this.#rosters = new ActorRosters(options.store);
  }

  /** The continuity's turn policy (the newest `policy.set`; `queue` without one). */
  async policy(continuity: string): Promise<TurnPolicy> {
    let policy: TurnPolicy = "queue";
    for await (const event of this.#options.store.read({
      continuity,
      types: ["policy.set"],
    })) {
      policy = (event.data as EventData<"policy.set">).policy;
    }
    return policy;
  }

  /**
   * Appends `input` as a turn and starts its run (or leaves it to the process that owns the
   * continuity). Rejects with `ActorAccessError` (nothing appended) when the access list refuses
   * the actor, and with `ServerError` 409 `turn.rejected` under the `reject` policy mid-run.
   */
  async submit(continuity: string, input: TurnInput): Promise<AcceptedTurn> {
    await this.#rosters.check(continuity, input.actor);
    const hosted = await this.#host(continuity);
    const policy = await this.policy(continuity);
    if (hosted.running.size > 0 && policy === "reject") {
      throw new ServerError(
        409,
        "turn.rejected",
        `continuity "${continuity}" is answering another turn and its policy rejects turns mid-run`,
        { hint: "Send it again once the run ends, or ask an owner to set the policy to queue" },
      );
    }
    if (hosted.running.size > 0 && policy === "interrupt") {
      hosted.session?.runtime.cancel(continuity, "interrupted by a new turn");
    }
    const event = await this.#options.store.append({
      continuity,
      type: "turn.added",
      actor: input.actor,
      origin: input.origin,
      data: { text: input.text },
    });
    if (!hosted.session || hosted.elsewhere) return { event };
    hosted.running.add(event.id);
    const run = hosted.session.runtime.accept(continuity, event.id);
    const done = () => hosted.running.delete(event.id);
    run.then(done, done);
    return { event, run };
  }

  /** Cancels the run going on here; `false` when none runs here (none, or another process's). */
  async cancel(continuity: string, reason = "cancelled over the API"): Promise<boolean> {
    const hosted = await this.#hosted.get(continuity);
    if (!hosted?.session || hosted.running.size === 0) return false;
    hosted.session.runtime.cancel(continuity, reason);
    return true;
  }

  /** True while a turn accepted here is running or waiting. */
  async busy(continuity: string): Promise<boolean> {
    return ((await this.#hosted.get(continuity))?.running.size ?? 0) > 0;
  }

  /** Hears the continuity's run notices live until the returned function is called. */
  async listen(continuity: string, listener: RunObserver): Promise<() => void> {
    const hosted = await this.#host(continuity);
    hosted.listeners.add(listener);
    return () => hosted.listeners.delete(listener);
  }

  /** True when another process owns the continuity (its runs are not seen here live). */
  async elsewhere(continuity: string): Promise<boolean> {
    return (await this.#host(continuity)).elsewhere;
  }

  /**
   * The agent session this process runs `continuity` with, taken up as a turn takes it up (its
   * lease held, its sources and its stream watch started). Rejects with 409
   * `continuity.elsewhere` when another process owns the continuity (it runs its sources and
   * its watch; change them there).
   */
  async session(continuity: string): Promise<AgentSession> {
    const hosted = await this.#host(continuity);
    if (!hosted.session || hosted.elsewhere) {
      throw new ServerError(
        409,
        "continuity.elsewhere",
        `another process runs continuity "${continuity}", so its sources and stream watch are not here`,
        { hint: "Ask the server (or spool chat) that holds its lease" },
      );
    }
    return hosted.session;
  }

  /** The session running `continuity` here already, without taking it up; `undefined` if none. */
  async runningSession(continuity: string): Promise<AgentSession | undefined> {
    const hosted = await this.#hosted.get(continuity)?.catch(() => undefined);
    return hosted?.elsewhere ? undefined : hosted?.session;
  }

  /** The agent manifests of the workspace (and the user and built-in tiers), by name. */
  agents(): string[] {
    const { workspace, env } = this.#options;
    return createItemSpace({ workspace, env })
      .list({ kind: "agent" })
      .filter((item) => item.active)
      .map((item) => item.name);
  }

  /** True when the workspace has an agent manifest `name`. */
  hasAgent(name: string): boolean {
    const { workspace, env } = this.#options;
    return createItemSpace({ workspace, env }).locate("agent", name) !== undefined;
  }

  /** Closes every session: runs are cancelled, leases released. */
  async close(): Promise<void> {
    this.#closed = true;
    const all = await Promise.allSettled([...this.#hosted.values()]);
    this.#hosted.clear();
    await Promise.all(
      all.map((result) =>
        result.status === "fulfilled" ? result.value.session?.close() : undefined,
      ),
    );
  }

  #host(continuity: string): Promise<Hosted> {
    if (this.#closed) {
      return Promise.reject(new ServerError(503, "server.closing", "the server is shutting down"));
    }
    let hosted = this.#hosted.get(continuity);
    if (!hosted) {
      hosted = this.#open(continuity);
      this.#hosted.set(continuity, hosted);
      // A refused open, and a continuity another process runs, are asked again next time (its
      // owner may have ended by then, and this process may take it up).
      hosted.then(
        (found) => (found.elsewhere ? this.#hosted.delete(continuity) : undefined),
        () => this.#hosted.delete(continuity),
      );
    }
    return hosted;
  }

  async #open(continuity: string): Promise<Hosted> {
    const { store, workspace, env, lease, provider, threadsDir } = this.#options;
    const hosted: Hosted = {
      session: undefined,
      elsewhere: false,
      listeners: new Set(),
      running: new Set(),
    };
    const observer = (notice: RunNotice) => {
      for (const listener of hosted.listeners) {
        try {
          listener(notice);
        } catch {
          // A listener that throws is dropped from this notice only: the run goes on.
        }
      }
    };
    const foreground = await foregroundDirective(store, continuity);
    const agent = foreground?.agent ?? (await agentLabel(store, continuity));
    const options: AgentSessionOptions = {
      ...(foreground && foreground.agent === undefined ? { directive: foreground.directive } : {}),
      ...(agent !== undefined ? { agent } : {}),
      ...(foreground?.inputs !== undefined ? { inputs: foreground.inputs } : {}),
      ...(provider ? { provider } : {}),
      observer,
      lease,
      ...(threadsDir !== undefined ? { threadsDir } : {}),
    };
    const session = this.#options.openSession
      ? await this.#options.openSession(continuity, options)
      : openAgentSession({ workspace, env, store, continuity }, options);
    hosted.session = session;
    try {
      await session.runtime.resume(continuity);
    } catch (error) {
      await session.close();
      if (!(error instanceof ContinuityLiveError)) throw error;
      hosted.session = undefined;
      hosted.elsewhere = true;
    }
    return hosted;
  }
}

/** The agent manifest the continuity was created for (`labels.agent`), if any. */
async function agentLabel(store: EventStore, continuity: string): Promise<string | undefined> {
  for await (const event of store.read({ continuity, types: ["continuity.created"], limit: 1 })) {
    return (event.data as EventData<"continuity.created">).labels?.agent;
  }
  return undefined;
}

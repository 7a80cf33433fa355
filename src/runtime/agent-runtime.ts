import { monotonicFactory } from "ulid";
import { selectSummarizer } from "../continuity/index.js";
import { mergeCoordinationLayers } from "../directives/index.js";
import { createModelCatalogue } from "../providers/index.js";
import { SpoolError } from "../spec/index.js";
import { ActorRosters } from "./actor-access.js";
import type { AgentRuntime, AgentRuntimeOptions } from "./agent-runtime-types.js";
import { notify } from "./agent-step.js";
import { withArtifactImages } from "./artifact-images.js";
import { ContinuityOwners } from "./continuity-owners.js";
import { ContinuitySession, type RuntimeShared } from "./continuity-session.js";
import { resumeSession } from "./session-resume.js";
import { sourcesView } from "./session-sources.js";
import type { RuntimeWatch, TurnAttachment } from "./session-watch.js";

export type {
  AgentRuntime,
  AgentRuntimeOptions,
  AgentSpec,
  InterceptedCall,
  TurnInput,
} from "./agent-runtime-types.js";
export { fillInputs } from "./session-continuity.js";

/**
 * Creates the agent runtime over a store and a provider: a `ContinuitySession` per continuity it
 * touches (the one owner of that continuity in this process), and, with `lease`, the lease that
 * makes this process the one owner among processes.
 */
export function createAgentRuntime(given: AgentRuntimeOptions): AgentRuntime {
  // Screenshots in a context are read from the store right before each call; replay's provider
  // answers by the request's digest, which names them by hash, so it reads nothing.
  const options = given.world
    ? given.world.enclose(given)
    : { ...given, provider: withArtifactImages(given.provider, given.store.artifacts) };
  const { store } = options;
  const catalogue = options.catalogue ?? createModelCatalogue();
  const continuation = options.continuation ?? mergeCoordinationLayers([]).continuation;
  const shared: RuntimeShared = {
    options,
    catalogue,
    continuation,
    summarizerFor:
      options.summarizerFor ??
      ((directive: string) =>
        selectSummarizer({
          directive: { name: directive },
          continuation,
          exists: (name) => options.agents?.get(name) !== undefined,
        })),
    runs: new Map(),
  };
  const sessions = new Map<string, ContinuitySession>();
  const lastTurnAt = new Map<string, number>();
  const rosters = new ActorRosters(store);
  let closed = false;
  const session = (continuity: string): ContinuitySession => {
    let found = sessions.get(continuity);
    if (!found) {
      found = new ContinuitySession(continuity, shared);
      sessions.set(continuity, found);
    }
    return found;
  };
  const owners = options.lease
    ? new ContinuityOwners({
        store,
        lease: options.lease,
        onTurn: (continuity, turn, event) => {
          const data = event.data as { text?: unknown };
          notify(options.observer, {
            type: "turn-received",
            continuity,
            turn,
            actor: event.actor ?? "?",
            text: typeof data.text === "string" ? data.text : "",
          });
          void accept(continuity, turn).catch(() => undefined);
        },
        onLost: (continuity) =>
          sessions.get(continuity)?.cancel("another process took this continuity over"),
      })
    : undefined;
  const newTurnId = monotonicFactory();
  if (owners) {
    shared.ownTurn = () => {
      const id = newTurnId();
      owners.markOwn(id);
      return id;
    };
  }
  const open = (continuity: string): ContinuitySession => {
    if (closed) throw new SpoolError("runtime.closed", "the runtime is closed");
    return session(continuity);
  };

  /** Owns `continuity` and takes its sources up: what every way into a turn's run does first. */
  const takeUp = async (continuity: string): Promise<ContinuitySession> => {
    await owners?.own(continuity);
    const current = open(continuity);
    await current.sources?.takeUp();
    return current;
  };

  /** Queues (or lets interrupt) the run of a turn already appended. */
  const accept = async (continuity: string, turn: string) =>
    (await takeUp(continuity)).accept(turn);

  return {
    async resume(continuity) {
      await owners?.own(continuity);
      const current = session(continuity);
      return current.onChain(() => resumeSession(current));
    },
    async submit(continuity, input) {
      // Refused before anything is appended or owned: the turn never reaches the log.
      await rosters.check(continuity, input.actor);
      let id: string | undefined;
      // The sources come first: a turn's run finds every source the manifest declares.
      if (options.sources) await takeUp(continuity);
      else await owners?.own(continuity);
      if (owners) {
        id = newTurnId();
        owners.markOwn(id);
      }
      const attachments = await watchAttachments(options.watch, continuity, input.text);
      const event = await store.append({
        ...(id !== undefined ? { id } : {}),
        continuity,
        type: "turn.added",
        actor: input.actor,
        origin: input.origin,
        data: { text: input.text, ...(attachments.length > 0 ? { attachments } : {}) },
      });
      lastTurnAt.set(continuity, Date.parse(event.ts));
      return accept(continuity, event.id);
    },
    accept,
    async runTurn(continuity, turn) {
      return (await takeUp(continuity)).enqueue(turn);
    },
    cancel(continuity, reason = "cancelled by the user") {
      sessions.get(continuity)?.cancel(reason);
    },
    async idle(continuity) {
      await sessions.get(continuity)?.chain;
    },
    async settled(continuity) {
      await sessions.get(continuity)?.settled();
    },
    state: (continuity) => session(continuity).loadState(),
    activity(continuity) {
      const current = sessions.get(continuity);
      const at = lastTurnAt.get(continuity);
      return {
        busy: current !== undefined && (current.running !== undefined || current.waiting > 0),
        ...(at !== undefined && Number.isFinite(at) ? { lastTurnAt: at } : {}),
      };
    },
    sources: (continuity) => sourcesView(session(continuity)),
    async close() {
      closed = true;
      // Background work (summaries, hooks' actions) is let finish: each is bounded by its
      // timeout, and a cut-off summary would be work lost (and a log replay could not re-derive).
      await Promise.all(
        [...sessions.values()].map((current) => current.close("the runtime closed")),
      );
      await owners?.close();
    },
  };
}

/** The watch's attachments for a turn of `text`; none without a watch or when it fails. */
async function watchAttachments(
  watch: RuntimeWatch | undefined,
  continuity: string,
  text: string,
): Promise<TurnAttachment[]> {
  if (!watch?.attach) return [];
  try {
    return [...(await watch.attach(continuity, text))];
  } catch {
    return [];
  }
}

import type { ActionCall } from "../actions/index.js";
import { createTokenEstimator } from "../providers/index.js";
import { SpoolError } from "../spec/index.js";
import type { AgentSpec } from "./agent-runtime-types.js";
import type { ContinuitySession } from "./continuity-session.js";
import { screenshotsOf, ThreadHistory } from "./thread-history.js";

/** The thread and step whose `agent` action spawns a child. */
export interface ChildParent {
  thread: string;
  step: string;
  /** The parent's spawn depth (0 for the foreground thread). */
  depth: number;
  spec: AgentSpec;
}

/**
 * Runs an `agent` action's directive as a child thread `<step>@<action>` of its parent, in the
 * parent's session (whose driver's hooks see the child start and return), and resolves with the
 * child's final response. A child past the parent's `maxSpawnDepth` (default 3) is refused
 * (`limit.reached`, then `limit.spawn-depth`); a child that does not complete logs
 * `thread.failed` and rejects with its error. Either signal cancels the child.
 */
export async function spawnChild(
  session: ContinuitySession,
  parent: ChildParent,
  call: ActionCall,
  signal: AbortSignal,
): Promise<string> {
  const { store, agents } = session.shared.options;
  const { continuity } = session;
  const spec = agents?.get(call.name);
  if (!spec) throw new SpoolError("agent.unknown", `there is no directive "${call.name}"`);
  const depth = parent.depth + 1;
  const max = parent.spec.limits.maxSpawnDepth ?? 3;
  if (depth > max) {
    await store.append({
      continuity,
      stream: { kind: "thread", id: parent.thread },
      type: "limit.reached",
      data: { limit: "spawn_depth", value: depth, max },
    });
    throw new SpoolError(
      "limit.spawn-depth",
      `a child agent at depth ${depth} would pass the spawn limit of ${max}`,
      { hint: "Do the work in this thread, or raise max_spawn_depth in the directive's limits" },
    );
  }
  const thread = `${parent.step}@${call.actionId}`;
  const started = await store.append({
    continuity,
    stream: { kind: "thread", id: thread },
    type: "thread.started",
    data: {
      directive: spec.directive,
      chain_root: thread,
      model: spec.model,
      parent: { thread: parent.thread, step: parent.step, action: call.actionId, depth },
    },
  });
  session.histories.set(
    thread,
    new ThreadHistory(thread, { after: started.seq - 1, ...screenshotsOf(session.shared.options) }),
  );
  await session.driver.fire(
    "thread.started",
    { thread, directive: spec.directive, parent: parent.thread },
    thread,
  );
  const both = AbortSignal.any([signal, call.signal]);
  const result = await session
    .runThread({
      thread,
      spec,
      depth,
      nextStep: 0,
      input: JSON.stringify(call.parameters),
      signal: both,
      // Its own, calibrated by its own steps alone (see `isChildThread`).
      estimator: createTokenEstimator({ catalogue: session.shared.catalogue }),
    })
    .finally(() => session.histories.delete(thread));
  const hooks = session.driver;
  await hooks.fire(
    "directive_return",
    {
      thread,
      directive: spec.directive,
      parent: parent.thread,
      status: result.status,
      ...(result.result !== undefined ? { result: result.result } : {}),
    },
    parent.thread,
  );
  if (result.status === "completed") {
    await store.append({
      continuity,
      stream: { kind: "thread", id: thread },
      type: "thread.completed",
      data: result.result !== undefined ? { result: result.result } : {},
    });
    await hooks.fire("thread.completed", { thread, directive: spec.directive }, thread);
    return result.result ?? "";
  }
  const error = result.error ?? {
    code: `agent.${result.status}`,
    message: `the child agent "${spec.directive}" ended ${result.status}`,
  };
  await store.append({
    continuity,
    stream: { kind: "thread", id: thread },
    type: "thread.failed",
    data: error,
  });
  throw new SpoolError(error.code, error.message);
}

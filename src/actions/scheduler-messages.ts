import type { ActionRequest } from "../protocol/index.js";
import type { CheckedActionExecutor } from "./checked-executor.js";

/** Longest skip or cancel message the catalog takes. */
const MESSAGE_MAX = 2000;

/** `text` cut to the catalog's message limit (with an ellipsis), never empty. */
export function clampMessage(text: string): string {
  if (text.length === 0) return "(no message)";
  return text.length > MESSAGE_MAX ? `${text.slice(0, MESSAGE_MAX - 1)}…` : text;
}

/** What `ask` returns, or `undefined` when it throws (an executor's fault is not the model's). */
function answers<T>(ask: () => T): T | undefined {
  try {
    return ask();
  } catch {
    return undefined;
  }
}

function list(names: readonly string[]): string {
  return names.length === 0 ? "none" : names.join(", ");
}

/**
 * Why `request` cannot run here, addressed to the model, or `undefined` when an executor takes
 * it: no executor for its type, or the executor has nothing of that name. Lists what is available.
 */
export function unknownExecutorMessage(
  request: ActionRequest,
  executors: ReadonlyMap<string, CheckedActionExecutor>,
): string | undefined {
  const executor = executors.get(request.type);
  if (!executor) {
    return clampMessage(
      `no executor runs actions of type "${request.type}" here; available types: ${list([...executors.keys()])}. Use one of those types.`,
    );
  }
  if (!answers(() => executor.canRun?.(request.name) ?? true)) {
    const names = answers(() => executor.names?.());
    return clampMessage(
      `there is no ${request.type} named "${request.name}"${names ? `; available: ${list(names)}` : ""}. Use one of the available names.`,
    );
  }
  return undefined;
}

/** The skip message of every member of a dependency cycle: the members and their edges. */
export function cycleMessage(cycle: readonly string[], depsOf: (id: string) => readonly string[]) {
  const members = new Set(cycle);
  const edges = cycle.flatMap((id) =>
    depsOf(id)
      .filter((dep) => members.has(dep))
      .map((dep) => `${id} → ${dep}`),
  );
  return clampMessage(
    `depends_on forms a cycle among ${list(cycle)} (${edges.join(", ")}): none of them can start. Remove one of these dependencies.`,
  );
}

/** The skip message of an action waiting for ids that never appeared in the step's output. */
export function missingMessage(absent: readonly string[]): string {
  return clampMessage(
    `depends_on names ${list(absent.map((id) => `"${id}"`))}, which never appeared in this step's output. Depend only on ids of actions you write.`,
  );
}

/** The skip message of an action whose dependency did not succeed. */
export function dependencyFailedMessage(cause: string, status: string): string {
  return clampMessage(`dependency "${cause}" ${status}, so this action did not run.`);
}

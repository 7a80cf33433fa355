import type { StreamRef } from "../spec/index.js";

/** A step id is `<thread>:<index>`; a task stream `<step>:<action>` (see `taskStreamId`). */
const STEP = /^(.+):(\d+)$/;
const TASK = /^(.+):(\d+):[^:]+$/;

/**
 * The thread an event's stream belongs to: the thread itself, a step's thread, or a task's
 * step's thread; `undefined` for continuity, source and worker streams.
 */
export function threadOfStream(stream: StreamRef): string | undefined {
  if (stream.kind === "thread") return stream.id;
  if (stream.kind === "step") return STEP.exec(stream.id)?.[1];
  if (stream.kind === "task") return TASK.exec(stream.id)?.[1];
  return undefined;
}

/** The step a step or task stream belongs to (`<thread>:<index>`), else `undefined`. */
export function stepOfStream(stream: StreamRef): string | undefined {
  if (stream.kind === "step") return stream.id;
  if (stream.kind !== "task") return undefined;
  const match = TASK.exec(stream.id);
  return match ? `${match[1]}:${match[2]}` : undefined;
}

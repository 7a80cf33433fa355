import { parseActionBody } from "./action-body.js";
import type { ActionRequest, SourcePosition } from "./action-request.js";
import type { BodyLexState } from "./body-strings.js";
import type { ProtocolEvent } from "./protocol-event.js";
import { type Problem, problemsToError, where } from "./protocol-problem.js";
import type { ActionTag } from "./tag-attributes.js";

/** An `<action>` whose open tag has been read and whose body is still arriving. */
export interface OpenAction {
  /** What its tag said, with the tag's problems. */
  tag: ActionTag;
  /** Where `<action` began and where the body begins (just after `>`). */
  start: SourcePosition;
  bodyStart: SourcePosition;
  /** The body as it arrived, joined once at `</action>`. */
  parts: string[];
  /** How far its JSON strings have been followed (`body-strings.ts`): where `</action>` counts. */
  lex: BodyLexState;
  inThought: boolean;
  /** The thought block it sits in. */
  parentBlock: number | undefined;
}

/**
 * Turns a closed `<action>` into its `action` event, or into one `error` event that lists every
 * problem of its tag and body (tag problems first). `ids` holds the ids already used (with where,
 * when known); a valid action adds its own. A rejected action never reserves its id, so the
 * model can send a corrected action with the same id.
 */
export function completeAction(
  action: OpenAction,
  end: SourcePosition,
  ids: Map<string, SourcePosition | undefined>,
): ProtocolEvent {
  const { tag } = action;
  const problems: Problem[] = tag.problems;
  if (tag.id !== undefined && ids.has(tag.id)) {
    const earlier = ids.get(tag.id);
    problems.push({
      code: "protocol.duplicate-id",
      message: `id "${tag.id}" of the action at ${where(action.start)} is already used ${earlier ? `by the action at ${where(earlier)}` : "earlier in this step"}; give each action its own id (depends_on refers to actions by id).`,
      at: action.start,
      expected: "an id not used before in this step",
    });
  }
  const text = action.parts.length === 1 ? action.parts[0]! : action.parts.join("");
  const parsed = parseActionBody(text, action.bodyStart);
  if ("problem" in parsed) problems.push(parsed.problem);
  if (problems.length > 0 || !("body" in parsed)) {
    return problemsToError(problems, tag.id, "The action did not run; send it again, corrected.");
  }
  const { id, type, mode } = tag;
  const body = parsed.body;
  const request: ActionRequest = {
    id: id!,
    type: type!,
    mode: mode!,
    name: body.name,
    parameters: body.parameters,
    dependsOn: body.dependsOn,
    retry: body.retry,
    onError: body.onError,
    inThought: action.inThought,
    span: { start: action.start, end },
  };
  if (body.outputKey !== undefined) request.outputKey = body.outputKey;
  if (body.timeoutMs !== undefined) request.timeoutMs = body.timeoutMs;
  ids.set(request.id, action.start);
  return action.parentBlock === undefined
    ? { type: "action", action: request }
    : { type: "action", action: request, parentBlock: action.parentBlock };
}

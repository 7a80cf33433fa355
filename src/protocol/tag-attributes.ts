import { isIdentifier } from "../spec/index.js";
import {
  ACTION_MODES,
  ACTION_TYPES,
  type ActionMode,
  type ActionType,
  type SourcePosition,
} from "./action-request.js";
import { type Problem, quote, where } from "./protocol-problem.js";
import type { RawAttribute, ScannedTag, TagName } from "./scanned-tag.js";

/** Maps an index of the scanned text to its position in the output. */
export type PositionOf = (index: number) => SourcePosition;

/** How each tag is written, for messages. */
export const TAG_EXAMPLES: { readonly [T in TagName]: string } = {
  thought: "<thought>",
  action: '<action type="tool" mode="async" id="fetch1">',
  response: '<response final="false">',
  context_feed: '<context_feed id="current_datetime">',
};

const ALLOWED: { readonly [T in TagName]: readonly string[] } = {
  thought: [],
  action: ["type", "mode", "id"],
  response: ["final"],
  context_feed: ["id"],
};

/** Fields of an action's JSON body that models sometimes write as attributes. */
const BODY_FIELDS = new Set([
  "name",
  "parameters",
  "output_key",
  "depends_on",
  "timeout",
  "retry",
  "on_error",
]);

const ID_RULE = "letters, digits and . _ : @ -, starting with a letter or digit, at most 128";

/** The attributes any protocol tag may have, first occurrence of each (valueless included). */
interface AttributeValues {
  type: RawAttribute | undefined;
  mode: RawAttribute | undefined;
  id: RawAttribute | undefined;
  final: RawAttribute | undefined;
}

const EXPECTED_NAMES: { readonly [T in TagName]: string } = {
  thought: "no attributes",
  action: 'type="…" mode="…" id="…"',
  response: 'final="…"',
  context_feed: 'id="…"',
};

/**
 * Checks the grammar and the attribute names of `tag`, adding a problem for each deviation,
 * unknown or repeated attribute, attribute without a value and unterminated quote. Returns the
 * first occurrence of each allowed attribute; one without a value is already a problem.
 */
function checkAttributes(
  name: TagName,
  tag: ScannedTag,
  pos: PositionOf,
  problems: Problem[],
): AttributeValues {
  const allowed = ALLOWED[name];
  const values: AttributeValues = {
    type: undefined,
    mode: undefined,
    id: undefined,
    final: undefined,
  };
  for (const attr of tag.attrs) {
    const key = attr.name as keyof AttributeValues;
    if (!allowed.includes(key)) {
      const at = pos(attr.at);
      const message =
        allowed.length === 0
          ? `<${name}> at ${where(pos(tag.start))} takes no attributes, but has "${attr.name}"; write ${TAG_EXAMPLES[name]}.`
          : name === "action" && BODY_FIELDS.has(attr.name)
            ? `"${attr.name}" at ${where(at)} is not an attribute of <action>: put "${attr.name}" in the JSON body between the tags.`
            : `<${name}> has no attribute "${attr.name}" (at ${where(at)}); its attributes are ${allowed.join(", ")}.`;
      problems.push({
        code: "protocol.bad-attribute",
        message,
        at,
        expected: EXPECTED_NAMES[name],
      });
    } else if (values[key] !== undefined) {
      problems.push({
        code: "protocol.bad-attribute",
        message: `attribute "${attr.name}" appears twice in the <${name}> tag at ${where(pos(tag.start))}; keep one.`,
        at: pos(attr.at),
        expected: EXPECTED_NAMES[name],
      });
    } else {
      values[key] = attr;
      if (attr.value === undefined) {
        problems.push({
          code: "protocol.bad-attribute",
          message: `attribute "${attr.name}" of <${name}> at ${where(pos(attr.at))} has no value; write ${attr.name}="…" as in ${TAG_EXAMPLES[name]}.`,
          at: pos(attr.at),
          expected: `${attr.name}="…"`,
        });
      } else if (attr.unterminated) {
        problems.push({
          code: "protocol.bad-attribute",
          message: `the value of "${attr.name}" at ${where(pos(attr.valueAt))} has no closing quote before ">"; write ${attr.name}="${attr.value}".`,
          at: pos(attr.valueAt),
          expected: "a closing quote",
        });
      }
    }
  }
  const deviation = tag.deviation;
  if (deviation) {
    problems.unshift({
      code: "protocol.bad-attribute",
      message: `the <${name}> tag at ${where(pos(tag.start))} is malformed: expected ${deviation.expected} at ${where(pos(deviation.at))}, found ${deviation.found}; the tag was taken to end before it. Write it as ${TAG_EXAMPLES[name]}.`,
      at: pos(deviation.at),
      expected: deviation.expected,
    });
  }
  return values;
}

function missing(name: TagName, attr: string, tag: ScannedTag, pos: PositionOf, rule: string) {
  const at = pos(tag.start);
  return {
    code: "protocol.missing-attribute",
    message: `<${name}> at ${where(at)} has no ${attr} attribute: add ${attr}="…" (${rule}), as in ${TAG_EXAMPLES[name]}.`,
    at,
    expected: `${attr}="…"`,
  } as const;
}

/** The problems of a tag that has none; never modified. */
const NO_PROBLEMS: readonly Problem[] = [];

/** Problems of a `<thought>` tag (it takes no attributes). */
export function checkThoughtTag(tag: ScannedTag, pos: PositionOf): readonly Problem[] {
  if (tag.attrs.length === 0 && tag.deviation === undefined) return NO_PROBLEMS;
  const problems: Problem[] = [];
  checkAttributes("thought", tag, pos, problems);
  return problems;
}

/** `final` of a `<response>` tag (default true; also when its value is bad) and its problems. */
export function checkResponseTag(
  tag: ScannedTag,
  pos: PositionOf,
): { final: boolean; problems: readonly Problem[] } {
  if (tag.attrs.length === 0 && tag.deviation === undefined) {
    return { final: true, problems: NO_PROBLEMS };
  }
  const problems: Problem[] = [];
  const final = checkAttributes("response", tag, pos, problems).final;
  if (final?.value === undefined) return { final: true, problems };
  const value = enumValue(final.value);
  if (value === "true" || value === "false") return { final: value === "true", problems };
  problems.push({
    code: "protocol.bad-attribute",
    message: `final=${quote(final.value)} at ${where(pos(final.valueAt))} must be "true" or "false"; it was taken as "true" (the run ends after this response). Write final="false" to keep going.`,
    at: pos(final.valueAt),
    expected: '"true" or "false"',
  });
  return { final: true, problems };
}

/** `id` of a `<context_feed>` tag (empty when missing or invalid) and its problems. */
export function checkFeedTag(
  tag: ScannedTag,
  pos: PositionOf,
): { feedId: string; problems: Problem[] } {
  const problems: Problem[] = [];
  const id = checkAttributes("context_feed", tag, pos, problems).id;
  if (id?.value === undefined) {
    if (id === undefined) problems.push(missing("context_feed", "id", tag, pos, ID_RULE));
    return { feedId: "", problems };
  }
  if (isIdentifier(id.value!)) return { feedId: id.value!, problems };
  problems.push({
    code: "protocol.bad-attribute",
    message: `id=${quote(id.value!)} at ${where(pos(id.valueAt))} is not a valid feed id: use ${ID_RULE}.`,
    at: pos(id.valueAt),
    expected: ID_RULE,
  });
  return { feedId: "", problems };
}

/** What an `<action>` tag says; a field is undefined when its attribute is missing or bad. */
export interface ActionTag {
  id: string | undefined;
  type: ActionType | undefined;
  mode: ActionMode | undefined;
  problems: Problem[];
}

/** Validates the `type`, `mode` and `id` of an `<action>` tag. */
export function checkActionTag(tag: ScannedTag, pos: PositionOf): ActionTag {
  const problems: Problem[] = [];
  const values = checkAttributes("action", tag, pos, problems);
  const result: ActionTag = { id: undefined, type: undefined, mode: undefined, problems };

  const type = values.type;
  const typeValue = type?.value === undefined ? undefined : enumValue(type.value);
  if (typeValue === undefined) {
    if (type === undefined) {
      problems.push(missing("action", "type", tag, pos, ACTION_TYPES.join(", ")));
    }
  } else if ((ACTION_TYPES as readonly string[]).includes(typeValue!)) {
    result.type = typeValue as ActionType;
  } else {
    const hint =
      typeValue === "context_feed" || typeValue === "feed"
        ? ' To add or change a context feed, use type="internal" with "name": "add_context_feed" (or remove_context_feed, update_context_feed).'
        : "";
    problems.push({
      code: "protocol.unknown-action-type",
      message: `type=${quote(type!.value!)} at ${where(pos(type!.valueAt))} is not an action type; use one of ${ACTION_TYPES.join(", ")}.${hint}`,
      at: pos(type!.valueAt),
      expected: `one of ${ACTION_TYPES.join(", ")}`,
    });
  }

  const mode = values.mode;
  const modeValue = mode?.value === undefined ? undefined : enumValue(mode.value);
  if (modeValue === undefined) {
    if (mode === undefined) {
      problems.push(missing("action", "mode", tag, pos, ACTION_MODES.join(", ")));
    }
  } else if ((ACTION_MODES as readonly string[]).includes(modeValue)) {
    result.mode = modeValue as ActionMode;
  } else {
    const close = ACTION_MODES.find((m) => squash(m) === squash(modeValue));
    problems.push({
      code: "protocol.unknown-mode",
      message: `mode=${quote(mode!.value!)} at ${where(pos(mode!.valueAt))} is not an execution mode; use one of ${ACTION_MODES.join(", ")}${close ? ` (did you mean "${close}"?)` : ""}.`,
      at: pos(mode!.valueAt),
      expected: `one of ${ACTION_MODES.join(", ")}`,
    });
  }

  const id = values.id;
  if (id?.value === undefined) {
    if (id === undefined) problems.push(missing("action", "id", tag, pos, ID_RULE));
  } else if (isIdentifier(id.value)) {
    result.id = id.value;
  } else {
    problems.push({
      code: "protocol.bad-attribute",
      message: `id=${quote(id.value!)} at ${where(pos(id.valueAt))} is not a valid action id: use ${ID_RULE}.`,
      at: pos(id.valueAt),
      expected: ID_RULE,
    });
  }
  return result;
}

/** The values of `type`, `mode` and `final` as written most of the time. */
const PLAIN_VALUES = new Set<string>([...ACTION_TYPES, ...ACTION_MODES, "true", "false"]);

/** An enumerated value as compared: trimmed and lower-cased (`Tool` is `tool`). */
function enumValue(value: string): string {
  return PLAIN_VALUES.has(value) ? value : value.trim().toLowerCase();
}

/** Lower case without `-`, `_` and spaces, to spot near misses such as `fire-and-forget`. */
function squash(value: string): string {
  return value.toLowerCase().replace(/[-_\s]/g, "");
}

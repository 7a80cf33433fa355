import { z } from "zod";
import type { McpElicitationPolicy } from "./mcp-config.js";

/** A value an elicitation answer may hold (MCP's primitive schemas and multi-select). */
export type ElicitationValue = string | number | boolean | string[];

/** Why Spool declined an elicitation: a stable code and a sentence saying what was wrong. */
export interface ElicitationDecline {
  code: /** The server's policy in `mcp.json` is `"elicitation": "decline"`. */
    | "elicitation.policy-decline"
    /** The request is not a form elicitation Spool can read (garbage, a bad schema). */
    | "elicitation.invalid-request"
    /** A URL-mode elicitation: it needs a person at a browser, and Spool declares form mode only. */
    | "elicitation.url-mode-unsupported"
    /** A required field has no default, and there is no person to ask. */
    | "elicitation.required-without-default";
  message: string;
}

/** How Spool answers one `elicitation/create` request (the MCP result, plus why it declined). */
export interface ElicitationAnswer {
  action: "accept" | "decline";
  /** With `accept`: every field that has a default, set to it. */
  content?: Record<string, ElicitationValue>;
  /** With `decline`: the reason, logged with the answer. */
  decline?: ElicitationDecline;
  /** What the request asked, for the log: its mode, message and field names (when readable). */
  request: { mode: string; message: string; fields: string[] };
}

const requestSchema = z.looseObject({
  mode: z.string().optional(),
  message: z.string(),
  requestedSchema: z.unknown().optional(),
});
const formSchema = z.looseObject({
  type: z.literal("object"),
  properties: z.record(z.string(), z.unknown()),
  required: z.array(z.string()).optional(),
});
const option = z.looseObject({ const: z.string() });
const stringField = z.looseObject({
  type: z.literal("string"),
  enum: z.array(z.string()).min(1).optional(),
  oneOf: z.array(option).min(1).optional(),
  minLength: z.number().int().nonnegative().optional(),
  maxLength: z.number().int().nonnegative().optional(),
  format: z.enum(["email", "uri", "date", "date-time"]).optional(),
  default: z.string().optional(),
});
const numberField = z.looseObject({
  type: z.enum(["number", "integer"]),
  minimum: z.number().optional(),
  maximum: z.number().optional(),
  default: z.number().optional(),
});
const booleanField = z.looseObject({ type: z.literal("boolean"), default: z.boolean().optional() });
const arrayField = z.looseObject({
  type: z.literal("array"),
  items: z.union([
    z.looseObject({ type: z.literal("string"), enum: z.array(z.string()).min(1) }),
    z.looseObject({ anyOf: z.array(option).min(1) }),
  ]),
  minItems: z.number().int().nonnegative().optional(),
  maxItems: z.number().int().nonnegative().optional(),
  default: z.array(z.string()).optional(),
});

/**
 * Spool's answer to an `elicitation/create` request's `params`, by `policy`, for a session with
 * no person to ask. Pure: the same request and policy always give the same answer.
 *
 * - `decline` declines everything (`elicitation.policy-decline`).
 * - `defaults` accepts a form whose every required field has a default, with each field that
 *   has one set to it (SEP-1034); it declines a form with a required field without a default
 *   (`elicitation.required-without-default`), a URL-mode request
 *   (`elicitation.url-mode-unsupported`), and anything that is not a valid form schema — a
 *   field of no MCP primitive type, a default of the wrong type or outside its own enum, range
 *   or length, a required name that is no field (`elicitation.invalid-request`, naming it).
 *
 * Never throws: garbage is a decline with its reason.
 */
export function answerElicitation(
  params: unknown,
  policy: McpElicitationPolicy,
): ElicitationAnswer {
  const parsed = requestSchema.safeParse(params);
  const mode = parsed.success ? (parsed.data.mode ?? "form") : "unknown";
  const message = parsed.success ? parsed.data.message.slice(0, 2000) : "";
  const form = parsed.success ? formSchema.safeParse(parsed.data.requestedSchema) : undefined;
  const fields = form?.success ? Object.keys(form.data.properties) : [];
  const request = { mode, message, fields };
  const decline = (code: ElicitationDecline["code"], text: string): ElicitationAnswer => ({
    action: "decline",
    decline: { code, message: text },
    request,
  });
  if (policy === "decline") {
    return decline("elicitation.policy-decline", 'the server\'s "elicitation" policy is "decline"');
  }
  if (!parsed.success) {
    return decline("elicitation.invalid-request", "the request has no message string");
  }
  if (mode === "url") {
    return decline(
      "elicitation.url-mode-unsupported",
      "URL-mode elicitation needs a person at a browser; Spool answers forms only",
    );
  }
  if (mode !== "form") {
    return decline("elicitation.invalid-request", `unknown elicitation mode "${mode}"`);
  }
  if (!form?.success) {
    return decline(
      "elicitation.invalid-request",
      'requestedSchema must be {"type": "object", "properties": {…}}',
    );
  }
  const content: Record<string, ElicitationValue> = {};
  for (const [name, schema] of Object.entries(form.data.properties)) {
    const checked = fieldDefault(schema);
    if ("problem" in checked) {
      return decline("elicitation.invalid-request", `field "${name}": ${checked.problem}`);
    }
    if (checked.value !== undefined) content[name] = checked.value;
  }
  for (const name of form.data.required ?? []) {
    if (!(name in form.data.properties)) {
      return decline("elicitation.invalid-request", `required field "${name}" is not a property`);
    }
    if (!(name in content)) {
      return decline(
        "elicitation.required-without-default",
        `required field "${name}" has no default, and there is no person to ask`,
      );
    }
  }
  return { action: "accept", content, request };
}

/** A field's default (undefined when it has none), or what makes the field unusable. */
function fieldDefault(
  schema: unknown,
): { value: ElicitationValue | undefined } | { problem: string } {
  const type = (schema as { type?: unknown } | null)?.type;
  const parser =
    type === "string"
      ? stringField
      : type === "number" || type === "integer"
        ? numberField
        : type === "boolean"
          ? booleanField
          : type === "array"
            ? arrayField
            : undefined;
  if (!parser)
    return {
      problem: `type ${JSON.stringify(type)} is not string, number, integer, boolean or array`,
    };
  const parsed = parser.safeParse(schema);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return { problem: `${issue.path.join(".") || "schema"}: ${issue.message}` };
  }
  const field = parsed.data as Record<string, unknown> & { default?: ElicitationValue };
  const value = field.default;
  if (value === undefined) return { value };
  const problem = outOfBounds(field, value);
  return problem ? { problem: `its default ${problem}` } : { value };
}

/** Why `value` breaks its own field's constraints, or undefined. */
function outOfBounds(field: Record<string, unknown>, value: ElicitationValue): string | undefined {
  if (typeof value === "string") {
    const allowed = allowedStrings(field);
    if (allowed && !allowed.includes(value)) return `"${value}" is not one of its options`;
    if (typeof field.minLength === "number" && value.length < field.minLength)
      return "is too short";
    if (typeof field.maxLength === "number" && value.length > field.maxLength) return "is too long";
  }
  if (typeof value === "number") {
    if (field.type === "integer" && !Number.isInteger(value)) return "is not an integer";
    if (typeof field.minimum === "number" && value < field.minimum) return "is below its minimum";
    if (typeof field.maximum === "number" && value > field.maximum) return "is above its maximum";
  }
  if (Array.isArray(value)) {
    const allowed = allowedStrings(field.items as Record<string, unknown>) ?? [];
    const stray = value.find((item) => !allowed.includes(item));
    if (stray !== undefined) return `holds "${stray}", which is not one of its options`;
    if (typeof field.minItems === "number" && value.length < field.minItems)
      return "has too few items";
    if (typeof field.maxItems === "number" && value.length > field.maxItems)
      return "has too many items";
  }
  return undefined;
}

function allowedStrings(field: Record<string, unknown>): string[] | undefined {
  if (Array.isArray(field.enum)) return field.enum as string[];
  const options = (field.oneOf ?? field.anyOf) as { const: string }[] | undefined;
  return options?.map((entry) => entry.const);
}

/** Field names whose values are not written to the log, whatever the server sent as default. */
const SECRET_FIELD = /pass(word)?|secret|token|api[-_]?key|credential|private/i;

/** `content` for the log: values of secret-looking fields replaced by `"[redacted]"`. */
export function loggableContent(
  content: Record<string, ElicitationValue>,
): Record<string, ElicitationValue> {
  return Object.fromEntries(
    Object.entries(content).map(([name, value]) => [
      name,
      SECRET_FIELD.test(name) ? "[redacted]" : value,
    ]),
  );
}

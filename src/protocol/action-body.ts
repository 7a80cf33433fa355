import { z } from "zod";
import { identifier, isIdentifier } from "../spec/index.js";
import {
  ON_ERROR_POLICIES,
  type OnErrorPolicy,
  type SourcePosition,
  VARIABLE_NAME_PATTERN,
} from "./action-request.js";
import { findJsonSyntaxError } from "./json-syntax-error.js";
import { type Problem, where } from "./protocol-problem.js";

/** The longest `timeout` in seconds: what a JavaScript timer can wait (2^31 − 1 ms). */
export const MAX_TIMEOUT_SECONDS = 2_147_483;

/**
 * The JSON body of an `<action>`. `name` and `parameters` are required (`parameters` is `{}` for
 * an action without inputs); the rest are optional, and `null` counts as absent. Unknown fields
 * are rejected, so a misspelt `depends_on` never passes silently.
 */
export const actionBodySchema = z.strictObject({
  name: z.string().min(1).max(200).regex(/\S/),
  parameters: z.record(z.string(), z.unknown()),
  output_key: z.string().regex(VARIABLE_NAME_PATTERN).nullish(),
  depends_on: z.array(identifier).max(256).nullish(),
  timeout: z.number().positive().max(MAX_TIMEOUT_SECONDS).nullish(),
  retry: z.number().int().min(0).max(100).nullish(),
  on_error: z.enum(ON_ERROR_POLICIES).nullish(),
});

/** What each field must be, for messages. */
const RULES: { readonly [K in keyof typeof actionBodySchema.shape]: string } = {
  name: "a non-empty string naming the tool, agent, relic, workflow, model task or internal action to run (at most 200 characters)",
  parameters: "a JSON object of inputs ({} when there are none)",
  output_key:
    "a variable name of letters, digits and _ that does not start with a digit (at most 128), used later as $name",
  depends_on: 'an array of action ids, e.g. ["fetch1", "fetch2"] (at most 256)',
  timeout: `a positive number of seconds (at most ${MAX_TIMEOUT_SECONDS})`,
  retry: "a whole number of further attempts from 0 to 100",
  on_error: `one of ${ON_ERROR_POLICIES.join(", ")}`,
};

const FIELDS = Object.keys(RULES).join(", ");

/** A valid body, in the names `ActionRequest` uses. */
export interface ActionBody {
  name: string;
  parameters: Record<string, unknown>;
  outputKey?: string;
  dependsOn: string[];
  timeoutMs?: number;
  retry: number;
  onError: OnErrorPolicy;
}

/** The output position of `offset` in a body text that starts at `start`. */
export function bodyPosition(start: SourcePosition, text: string, offset: number): SourcePosition {
  let line = start.line;
  let last = -1;
  for (let nl = text.indexOf("\n"); nl !== -1 && nl < offset; nl = text.indexOf("\n", nl + 1)) {
    line++;
    last = nl;
  }
  return {
    offset: start.offset + offset,
    line,
    column: last === -1 ? start.column + offset : offset - last,
  };
}

const JSON_HINT =
  'Write one JSON object such as {"name": "web_scraper", "parameters": {"url": "https://example.com"}}, each string closed on the line it opens (write a line break inside a string as \\n).';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The body when it plainly fits `actionBodySchema`, else undefined (then zod decides and words
 * the problems). It accepts only what the schema accepts, with the same result (a property test
 * holds the two together); it exists because most bodies are fine and this is several times
 * cheaper than a schema run on the parser's hot path.
 */
export function plainActionBody(value: unknown): ActionBody | undefined {
  if (!isPlainObject(value)) return undefined;
  let name: string | undefined;
  let parameters: Record<string, unknown> | undefined;
  const body: Omit<ActionBody, "name" | "parameters"> = {
    dependsOn: [],
    retry: 0,
    onError: "fail",
  };
  for (const key in value) {
    const field = value[key];
    switch (key) {
      case "name":
        if (typeof field !== "string" || field.length > 200 || !/\S/.test(field)) return undefined;
        name = field;
        break;
      case "parameters":
        if (!isPlainObject(field) || Object.hasOwn(field, "__proto__")) return undefined;
        parameters = field;
        break;
      case "output_key":
        if (field === null) break;
        if (typeof field !== "string" || !VARIABLE_NAME_PATTERN.test(field)) return undefined;
        body.outputKey = field;
        break;
      case "depends_on":
        if (field === null) break;
        if (!Array.isArray(field) || field.length > 256) return undefined;
        for (const id of field) {
          if (!isIdentifier(id)) return undefined;
        }
        body.dependsOn = field as string[];
        break;
      case "timeout":
        if (field === null) break;
        if (typeof field !== "number" || !(field > 0 && field <= MAX_TIMEOUT_SECONDS))
          return undefined;
        body.timeoutMs = Math.ceil(field * 1000);
        break;
      case "retry":
        if (field === null) break;
        if (!Number.isSafeInteger(field) || (field as number) < 0 || (field as number) > 100)
          return undefined;
        body.retry = field as number;
        break;
      case "on_error":
        if (field === null) break;
        if (field !== "fail" && field !== "skip" && field !== "retry") return undefined;
        body.onError = field;
        break;
      default:
        return undefined;
    }
  }
  if (name === undefined || parameters === undefined) return undefined;
  const result: ActionBody = {
    name,
    parameters,
    dependsOn: body.dependsOn,
    retry: body.retry,
    onError: body.onError,
  };
  if (body.outputKey !== undefined) result.outputKey = body.outputKey;
  if (body.timeoutMs !== undefined) result.timeoutMs = body.timeoutMs;
  return result;
}

/**
 * Parses and validates an action's body (the text between `<action …>` and `</action>`, which
 * starts at `start` in the output). Returns the body, or one `protocol.bad-action-body` problem
 * that says where the JSON broke (as an output position) or lists every field that does not fit.
 * Never throws.
 */
export function parseActionBody(
  text: string,
  start: SourcePosition,
): { body: ActionBody } | { problem: Problem } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const first = text.search(/\S/);
    if (first === -1) {
      const at = bodyPosition(start, text, 0);
      return {
        problem: {
          code: "protocol.bad-action-body",
          message: `the action body at ${where(at)} is empty. ${JSON_HINT}`,
          at,
          expected: "a JSON object",
        },
      };
    }
    const syntax = findJsonSyntaxError(text);
    const at = bodyPosition(start, text, syntax?.offset ?? first);
    const what = syntax
      ? `expected ${syntax.expected} at ${where(at)}, found ${syntax.found}`
      : `${error instanceof Error ? error.message : String(error)}`;
    const tip = syntax?.found === '"/"' ? " JSON has no comments." : "";
    return {
      problem: {
        code: "protocol.bad-action-body",
        message: `the body of the action is not valid JSON: ${what}.${tip} ${JSON_HINT}`,
        at,
        expected: syntax?.expected ?? "valid JSON",
      },
    };
  }
  const plain = plainActionBody(value);
  if (plain) return { body: plain };
  const result = actionBodySchema.safeParse(value);
  if (result.success) {
    const data = result.data;
    const body: ActionBody = {
      name: data.name,
      parameters: data.parameters,
      dependsOn: data.depends_on ?? [],
      retry: data.retry ?? 0,
      onError: data.on_error ?? "fail",
    };
    if (data.output_key != null) body.outputKey = data.output_key;
    if (data.timeout != null) body.timeoutMs = Math.ceil(data.timeout * 1000);
    return { body };
  }
  const at = bodyPosition(start, text, Math.max(0, text.search(/\S/)));
  const isObject = typeof value === "object" && value !== null && !Array.isArray(value);
  const issues: string[] = [];
  for (const issue of result.error.issues) {
    const [field, index] = issue.path;
    if (issue.code === "unrecognized_keys") {
      const attrs = issue.keys.filter((key) => ["type", "mode", "id"].includes(key));
      issues.push(
        `unknown field${issue.keys.length > 1 ? "s" : ""} ${issue.keys.map((key) => JSON.stringify(key)).join(", ")} (the body takes ${FIELDS}${attrs.length > 0 ? "; type, mode and id are attributes of the <action> tag" : ""})`,
      );
    } else if (field === undefined) {
      issues.push(
        `the body must be a JSON object, not ${Array.isArray(value) ? "an array" : value === null ? "null" : `a ${typeof value}`}`,
      );
    } else if (typeof field === "string" && field in RULES) {
      const rule = RULES[field as keyof typeof RULES];
      if (field === "depends_on" && typeof index === "number") {
        issues.push(
          `depends_on[${index}] must be an action id (letters, digits and . _ : @ -, at most 128)`,
        );
      } else if (isObject && !(field in (value as object))) {
        issues.push(`${field} is missing: it must be ${rule}`);
      } else issues.push(`${field} must be ${rule}`);
    } else issues.push(`${issue.path.join(".")}: ${issue.message}`);
  }
  return {
    problem: {
      code: "protocol.bad-action-body",
      message: `the JSON body at ${where(at)} does not fit: ${[...new Set(issues)].join("; ")}.`,
      at,
      expected: `a JSON object with ${FIELDS}`,
    },
  };
}

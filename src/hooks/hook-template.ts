import { type FieldIssue, isMapping, type PathSegment, parsePath, readPath } from "./hook-path.js";

/** One alternative of a template: a path into the event's payload, or a literal. */
export type TemplateAlternative =
  | { kind: "path"; segments: PathSegment[] }
  | { kind: "literal"; value: string | number };

/** A parsed string: literal text and `${…}` templates, each a list of `||` alternatives. */
export type TemplatePart = string | { alternatives: TemplateAlternative[] };

/** A malformed template string; `message` says what is wrong and what to write instead. */
export class TemplateSyntaxError extends Error {}

const ROOTS = `a template reads the event's fields (\${event.pressure_ratio}, \${event.error.code}) or is a quoted literal ('none') or a number, with || between alternatives`;
const NUMBER = /^-?\d+(?:\.\d+)?$/;

/**
 * Parses `text` into literal text and templates. Throws `TemplateSyntaxError` for an unclosed
 * `${`, an empty template, an unterminated quote, or an alternative that is neither an `event.`
 * path, a quoted literal nor a number (`${hook.id}`, `${event}` are refused).
 */
export function parseTemplate(text: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let literal = "";
  let i = 0;
  while (i < text.length) {
    if (text.startsWith("${", i)) {
      const end = findClose(text, i + 2);
      if (end < 0) throw new TemplateSyntaxError(`"${text}" has \${ without a closing }`);
      if (literal) parts.push(literal);
      literal = "";
      parts.push({ alternatives: parseAlternatives(text.slice(i + 2, end)) });
      i = end + 1;
    } else {
      literal += text[i];
      i += 1;
    }
  }
  if (literal) parts.push(literal);
  return parts;
}

function findClose(text: string, from: number): number {
  let quote: string | undefined;
  for (let i = from; i < text.length; i += 1) {
    const char = text[i];
    if (quote) {
      if (char === "\\") i += 1;
      else if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') quote = char;
    else if (char === "}") return i;
  }
  return -1;
}

function parseAlternatives(expression: string): TemplateAlternative[] {
  const pieces: string[] = [];
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < expression.length; i += 1) {
    const char = expression[i];
    if (quote) {
      if (char === "\\") i += 1;
      else if (char === quote) quote = undefined;
    } else if (char === "'" || char === '"') quote = char;
    else if (expression.startsWith("||", i)) {
      pieces.push(expression.slice(start, i));
      start = i + 2;
      i += 1;
    }
  }
  if (quote) throw new TemplateSyntaxError(`\${${expression}} has an unterminated ${quote}`);
  pieces.push(expression.slice(start));
  return pieces.map((piece) => parseAlternative(piece.trim(), expression));
}

function parseAlternative(piece: string, expression: string): TemplateAlternative {
  if (piece === "") {
    throw new TemplateSyntaxError(`\${${expression}} has an empty alternative: ${ROOTS}`);
  }
  const first = piece[0];
  if (first === "'" || first === '"') {
    if (piece.length < 2 || piece[piece.length - 1] !== first) {
      throw new TemplateSyntaxError(`\${${expression}}: ${piece} is not one quoted literal`);
    }
    return { kind: "literal", value: piece.slice(1, -1).replace(/\\(.)/g, "$1") };
  }
  if (NUMBER.test(piece)) return { kind: "literal", value: Number(piece) };
  const segments = parsePath(piece);
  if (segments?.[0] !== "event") {
    throw new TemplateSyntaxError(`\${${expression}}: "${piece}" is not allowed: ${ROOTS}`);
  }
  if (!segments || segments.length === 1) {
    throw new TemplateSyntaxError(
      `\${${expression}}: name a field of the event, e.g. \${event.thread}`,
    );
  }
  return { kind: "path", segments: segments.slice(1) };
}

/**
 * Checks every string inside `value` (a hook's params: any JSON) for template syntax; returns
 * one issue per malformed string at its path. Never throws.
 */
export function checkTemplates(value: unknown, at: PathSegment[] = []): FieldIssue[] {
  if (typeof value === "string") {
    try {
      parseTemplate(value);
      return [];
    } catch (error) {
      if (!(error instanceof TemplateSyntaxError)) throw error;
      return [{ path: at, message: error.message }];
    }
  }
  if (Array.isArray(value))
    return value.flatMap((item, index) => checkTemplates(item, [...at, index]));
  if (isMapping(value)) {
    return Object.entries(value).flatMap(([key, item]) => checkTemplates(item, [...at, key]));
  }
  return [];
}

/**
 * Renders the templates in every string of `value` against the event's `payload`, returning a
 * new value (the input is not changed). A string that is exactly one template takes the value's
 * own JSON type (a number stays a number; `null` when no alternative has a value); templates
 * inside longer text are written as text (mappings and lists as JSON, nothing as ""). An
 * alternative counts when its path exists and is neither `null` nor `""`. A malformed string
 * (one `checkTemplates` reports) is kept as it is. Pure; never throws.
 */
export function renderTemplates(value: unknown, payload: unknown): unknown {
  if (typeof value === "string") return renderString(value, payload);
  if (Array.isArray(value)) return value.map((item) => renderTemplates(item, payload));
  if (isMapping(value)) {
    const rendered: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) rendered[key] = renderTemplates(item, payload);
    return rendered;
  }
  return value;
}

/** Renders `value` with `renderTemplates` and writes the result as text (`null` → ""). */
export function renderText(value: string, payload: unknown): string {
  const rendered = renderString(value, payload);
  return typeof rendered === "string" ? rendered : asText(rendered);
}

function renderString(text: string, payload: unknown): unknown {
  let parts: TemplatePart[];
  try {
    parts = parseTemplate(text);
  } catch {
    return text;
  }
  const [only] = parts;
  if (parts.length === 1 && only !== undefined && typeof only !== "string") {
    const found = pick(only.alternatives, payload);
    return found === undefined ? null : copy(found);
  }
  return parts
    .map((part) => (typeof part === "string" ? part : asText(pick(part.alternatives, payload))))
    .join("");
}

function pick(alternatives: readonly TemplateAlternative[], payload: unknown): unknown {
  for (const alternative of alternatives) {
    if (alternative.kind === "literal") return alternative.value;
    const found = readPath(payload, alternative.segments);
    if (found.found && found.value !== null && found.value !== "") return found.value;
  }
  return undefined;
}

function copy(value: unknown): unknown {
  if (typeof value !== "object" || value === null) return value;
  try {
    return structuredClone(value);
  } catch {
    return value;
  }
}

function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  if (typeof value === "string") return value;
  if (typeof value === "object") return JSON.stringify(value);
  return String(value);
}

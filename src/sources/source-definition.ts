import { z } from "zod";
import { preview } from "../feeds/index.js";
import { IDENTIFIER_MAX, IDENTIFIER_PATTERN, nearestName } from "../spec/index.js";
import { type SourceIssue, zodSourceIssues } from "./source-issues.js";
import { literalSecretIssues } from "./source-secrets.js";
import {
  DEFAULT_BATCHING,
  SOURCE_KINDS,
  type SourceDefinition,
  type SourceJson,
  type SourceKind,
} from "./source-types.js";

/** The mode a kind gets when its definition names none: `cursor` for sequential data, else `state`. */
export function defaultSourceMode(kind: SourceKind): "cursor" | "state" {
  return kind === "file" || kind === "dataset" || kind === "command" ? "cursor" : "state";
}

/** Pattern names are used as `matches.<name>` in hook conditions: a letter, then letters, digits, `_`. */
export const PATTERN_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

const TARGET_EXAMPLES: Record<SourceKind, string> = {
  file: "target: logs/app.log",
  dataset: "target: data/events.jsonl",
  command: 'target: "journalctl -f -u web"',
  http: "target: https://example.com/status.json",
  sse: "target: https://example.com/events",
  websocket: "target: wss://example.com/stream",
  browser: "target: browser",
};

/** The URL schemes each network kind reads. */
export const SOURCE_SCHEMES: Partial<Record<SourceKind, readonly string[]>> = {
  http: ["http:", "https:"],
  sse: ["http:", "https:"],
  websocket: ["ws:", "wss:"],
};

const wholeNumber = (field: string, min: number, max: number, example: number) => {
  const message = `must be a whole number from ${min} to ${max}, e.g. ${field}: ${example}`;
  return z.number({ error: message }).int(message).min(min, message).max(max, message);
};

const MiB = 1024 * 1024;

const batchSchema = z.strictObject(
  {
    max_lines: wholeNumber("max_lines", 1, 100_000, DEFAULT_BATCHING.maxLines).optional(),
    max_bytes: wholeNumber("max_bytes", 1, 16 * MiB, DEFAULT_BATCHING.maxBytes).optional(),
    max_wait_ms: wholeNumber("max_wait_ms", 0, 3_600_000, DEFAULT_BATCHING.maxWaitMs).optional(),
    max_line_bytes: wholeNumber(
      "max_line_bytes",
      1,
      16 * MiB,
      DEFAULT_BATCHING.maxLineBytes,
    ).optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? "unknown field"
        : "must be a mapping, e.g. batch: { max_lines: 500, max_wait_ms: 1000 }",
  },
);

/** A regular expression as written, checked by compiling it; the engine's message says what is wrong. */
const regexSource = (example: string) =>
  z
    .string({ error: `must be a regular expression as text, e.g. "${example}"` })
    .min(1, `must not be empty, e.g. "${example}"`)
    .max(1_000, "must be at most 1,000 characters")
    .superRefine((value, context) => {
      try {
        new RegExp(value);
      } catch (error) {
        context.addIssue({
          code: "custom",
          message: `is not a valid regular expression (${(error as Error).message}); write one such as "${example}"`,
        });
      }
    });

const regexList = (field: string, example: string) =>
  z
    .array(regexSource(example), {
      error: `must be a list of regular expressions, e.g. ${field}: ["${example}"]`,
    })
    .max(64, `holds at most 64 patterns`);

const kindSchema = z.string({ error: kindMessage }).superRefine((value, context) => {
  if ((SOURCE_KINDS as readonly string[]).includes(value)) return;
  context.addIssue({ code: "custom", message: kindMessage({ input: value }) });
});

function kindMessage(issue: { input?: unknown }): string {
  const list = `one of ${SOURCE_KINDS.join(", ")}, e.g. kind: file`;
  if (issue.input === undefined) return `is missing: say what the source reads, ${list}`;
  const near = typeof issue.input === "string" ? nearestName(issue.input, SOURCE_KINDS) : undefined;
  return `${preview(issue.input)} is not a kind of source${near ? `; did you mean "${near}"?` : ""}; write ${list}`;
}

/** One entry of a manifest's `sources`, in the manifest's own (snake_case) shape. */
export const sourceEntrySchema = z.strictObject(
  {
    id: z
      .string({
        error: (issue) =>
          issue.input === undefined
            ? "is missing: name the source, e.g. id: app-log"
            : "must be text, e.g. id: app-log",
      })
      .max(IDENTIFIER_MAX, `must be at most ${IDENTIFIER_MAX} characters, e.g. id: app-log`)
      .regex(
        IDENTIFIER_PATTERN,
        "must start with a letter or digit and hold only letters, digits and . _ : @ -, e.g. id: app-log",
      ),
    kind: kindSchema,
    target: z
      .string({
        error: (issue) =>
          issue.input === undefined
            ? "is missing: the path, command line or URL to read, e.g. target: logs/app.log"
            : "must be text: a path, command line or URL, e.g. target: logs/app.log",
      })
      .trim()
      .min(1, "must not be empty: a path, command line or URL, e.g. target: logs/app.log")
      .max(4_096, "must be at most 4,096 characters"),
    batch: batchSchema.optional(),
    include: regexList("include", "ERROR|WARN").optional(),
    exclude: regexList("exclude", "healthcheck").optional(),
    patterns: z
      .record(z.string().regex(PATTERN_NAME), regexSource("ERROR|FATAL"), {
        error: (issue) =>
          issue.code === "invalid_key"
            ? "is not a pattern name: a letter, then letters, digits and _, e.g. status_5xx"
            : 'must be a mapping of name to regular expression, e.g. { error: "ERROR|FATAL" }',
      })
      .refine((value) => Object.keys(value).length <= 64, "holds at most 64 patterns")
      .optional(),
    mode: z
      .enum(["cursor", "state"], {
        error:
          "must be cursor (sequential data, read once in order) or state (live data), e.g. mode: cursor",
      })
      .optional(),
    options: z
      .record(z.string(), z.json(), {
        error: "must be a mapping of the kind's own settings, e.g. options: { from: start }",
      })
      .optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? "unknown field"
        : "must be a mapping with id, kind, target, e.g. { id: app-log, kind: file, target: logs/app.log }",
  },
);

/** A source entry as the manifest writes it (the shape `source.added` logs). */
export type SourceEntry = z.input<typeof sourceEntrySchema>;

/** Issues of a target that parsed as text but does not suit its kind (a URL kind's scheme). */
function targetIssue(kind: SourceKind, target: string): string | undefined {
  const schemes = SOURCE_SCHEMES[kind];
  if (!schemes) return undefined;
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    return `must be an absolute URL for ${kind === "websocket" ? "a" : "an"} ${kind} source, e.g. ${TARGET_EXAMPLES[kind]}`;
  }
  if (schemes.includes(url.protocol)) return undefined;
  return `${kind === "websocket" ? "a" : "an"} ${kind} source reads ${schemes.map((s) => `${s}//`).join(" or ")} URLs, not ${url.protocol}//; e.g. ${TARGET_EXAMPLES[kind]}`;
}

/**
 * Validates one source entry (manifest shape) into a `SourceDefinition`, or returns the issues
 * under `at` (e.g. `["sources", 2]`). Missing batch limits take `DEFAULT_BATCHING`; a missing
 * `mode` takes `defaultSourceMode(kind)`. Never throws.
 */
export function checkSourceEntry(
  raw: unknown,
  at: readonly (string | number)[] = [],
):
  | { definition: SourceDefinition; issues?: undefined }
  | { definition?: undefined; issues: SourceIssue[] } {
  const id =
    typeof raw === "object" && raw !== null && typeof (raw as { id?: unknown }).id === "string"
      ? (raw as { id: string }).id
      : undefined;
  const parsed = sourceEntrySchema.safeParse(raw);
  const issues = parsed.success ? [] : zodSourceIssues(parsed.error, at, id);
  const { kind: rawKind, target: rawTarget } = (raw ?? {}) as { kind?: unknown; target?: unknown };
  // A target with an environment reference is checked once expanded, when the source opens.
  const problem =
    (SOURCE_KINDS as readonly unknown[]).includes(rawKind) &&
    typeof rawTarget === "string" &&
    !rawTarget.includes("${")
      ? targetIssue(rawKind as SourceKind, rawTarget.trim())
      : undefined;
  if (problem) {
    const issue = { path: [...at, "target"], message: problem };
    issues.push(id === undefined ? issue : { ...issue, source: id });
  }
  for (const issue of literalSecretIssues((raw ?? {}) as { target?: unknown }, at)) {
    issues.push(id === undefined ? issue : { ...issue, source: id });
  }
  if (!parsed.success || issues.length > 0) return { issues };
  const entry = parsed.data;
  const kind = entry.kind as SourceKind;
  return {
    definition: {
      id: entry.id,
      kind,
      target: entry.target,
      batching: {
        maxLines: entry.batch?.max_lines ?? DEFAULT_BATCHING.maxLines,
        maxBytes: entry.batch?.max_bytes ?? DEFAULT_BATCHING.maxBytes,
        maxWaitMs: entry.batch?.max_wait_ms ?? DEFAULT_BATCHING.maxWaitMs,
        maxLineBytes: entry.batch?.max_line_bytes ?? DEFAULT_BATCHING.maxLineBytes,
      },
      include: entry.include ?? [],
      exclude: entry.exclude ?? [],
      mode: entry.mode ?? defaultSourceMode(kind),
      patterns: entry.patterns ?? {},
      options: (entry.options ?? {}) as { [key: string]: SourceJson },
    },
  };
}

/**
 * A definition in the manifest's shape, every default written out: what `source.added` logs and
 * `checkSourceEntry` reads back into an equal definition.
 */
export function sourceEntryOf(definition: SourceDefinition): { [key: string]: SourceJson } {
  return {
    id: definition.id,
    kind: definition.kind,
    target: definition.target,
    batch: {
      max_lines: definition.batching.maxLines,
      max_bytes: definition.batching.maxBytes,
      max_wait_ms: definition.batching.maxWaitMs,
      max_line_bytes: definition.batching.maxLineBytes,
    },
    include: [...definition.include],
    exclude: [...definition.exclude],
    patterns: { ...definition.patterns },
    mode: definition.mode,
    options: definition.options,
  };
}

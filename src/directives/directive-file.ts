import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { basename } from "node:path";
import { z } from "zod";
import { ConfigError, describeError } from "../spec/index.js";
import type { Directive, DirectiveInput, DirectiveLimits } from "./directive.js";
import { INPUT_TYPES, MODEL_TIERS } from "./directive.js";
import { DirectiveBlockError, findDirectiveBlock } from "./directive-block.js";
import { coerceInputValue } from "./directive-inputs.js";
import { type FieldPlace, readMetadata } from "./directive-metadata.js";
import { type ItemIssue, itemConfigError } from "./item-issues.js";
import type { ItemSource, ItemTier } from "./item-source.js";
import { PERMISSION_KINDS, type Permissions } from "./permissions.js";
import { XmlSyntaxError } from "./xml-reader.js";

/** Options of `parseDirective`. */
export interface ParseDirectiveOptions {
  /** The file's absolute path (recorded in `source`). */
  path: string;
  /** How the path is shown in messages; default `path`. */
  display?: string;
  /** The space tier it was found in; default `project`. */
  tier?: ItemTier;
  /** sha256 (hex) of the file's bytes; default: computed from `text` as UTF-8. */
  sha256?: string;
  /** The key that signed it, when a signature was verified. */
  signed?: { keyId: string };
  /** The name the file must declare (its file name without `.md`); default: not checked. */
  expectedName?: string;
}

const SEMVER =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;
const HINT = "Fix each field named; docs/directives.md describes the directive format";

const text = (required: string) =>
  z.string({ error: (issue) => (issue.input === undefined ? required : "must be text") });

const whole = (attribute: string, min: number, example: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+$/, `${attribute} must be a whole number, e.g. ${attribute}="${example}"`)
    .transform(Number)
    .refine((value) => Number.isSafeInteger(value) && value >= min, {
      error: `${attribute} must be at least ${min}, e.g. ${attribute}="${example}"`,
    });

const decimal = (attribute: string, example: string, what: string) =>
  z
    .string()
    .trim()
    .regex(/^\d+(?:\.\d+)?$/, `${attribute} must be ${what}, e.g. ${attribute}="${example}"`)
    .transform(Number);

const metadataSchema = z.object({
  name: text('name is missing: write <directive name="my_agent" version="1.0.0">')
    .trim()
    .regex(NAME, "name must be letters, digits, _, . or - (the file name without .md)"),
  version: text('version is missing: write <directive name="…" version="1.0.0">')
    .trim()
    .regex(SEMVER, 'version must be a semantic version, e.g. version="1.0.0"'),
  description: text(
    "<description> is missing: add <description>what this directive does</description> to <metadata>",
  ).min(1, "<description> is empty: say what this directive does"),
  category: z.string().optional(),
  author: z.string().optional(),
  model: z
    .object({
      tier: z.enum(MODEL_TIERS, {
        error: (issue) =>
          issue.input === undefined
            ? 'tier is missing: write <model tier="general"/> (fast, general or high)'
            : `tier must be fast, general or high, not ${JSON.stringify(issue.input)}`,
      }),
      id: z.string().trim().min(1, 'id must name a model, e.g. id="claude-sonnet-4-5"').optional(),
    })
    .optional(),
  limits: z
    .object({
      max_turns: whole("max_turns", 1, "10").optional(),
      max_tokens: whole("max_tokens", 1, "200000").optional(),
      max_spend: decimal("max_spend", "0.50", "an amount of US dollars").optional(),
      max_wall_seconds: decimal("max_wall_seconds", "600", "a number of seconds")
        .refine((value) => value > 0, 'max_wall_seconds must be more than 0, e.g. "600"')
        .optional(),
      max_spawn_depth: whole("max_spawn_depth", 0, "2").optional(),
    })
    .optional(),
  permissions: z
    .record(
      z.string(),
      z.array(z.string().trim().min(1, "a permission must name a pattern, e.g. fs.*")),
    )
    .optional(),
  summarizer: z
    .object({
      directive: text('directive is missing: write <summarizer directive="thread_summary"/>')
        .trim()
        .min(1, "directive must name a summarizer directive"),
    })
    .optional(),
  inputs: z
    .array(
      z.object({
        name: text('name is missing: write <input name="topic" type="string">')
          .trim()
          .regex(
            /^[A-Za-z_][A-Za-z0-9_]*$/,
            "an input name is a letter or _, then letters, digits or _",
          ),
        type: z
          .enum(INPUT_TYPES, {
            error: (issue) =>
              `type must be one of ${INPUT_TYPES.join(", ")}${issue.input === undefined ? ' (write type="string")' : `, not ${JSON.stringify(issue.input)}`}`,
          })
          .optional(),
        required: z
          .enum(["true", "false"], { error: 'required must be "true" or "false"' })
          .optional(),
        default: z.string().optional(),
        description: z.string(),
      }),
    )
    .optional(),
});

/**
 * Parses a directive file: finds the metadata block (`findDirectiveBlock`), validates it with
 * zod and returns the `Directive`, with everything outside the block as its `body`. A `<model>`
 * that is absent means tier `general`; absent `<limits>` are unlimited; absent `<permissions>`
 * grant nothing. Pure apart from hashing. Throws one `ConfigError` (`config.directive`) listing
 * every problem as `file:line: field: what is wrong and how to fix it`; never anything else.
 */
export function parseDirective(text: string, options: ParseDirectiveOptions): Directive {
  const file = options.display ?? options.path;
  let block: ReturnType<typeof findDirectiveBlock>;
  try {
    block = findDirectiveBlock(text);
  } catch (error) {
    if (error instanceof XmlSyntaxError) {
      throw itemConfigError(
        "config.directive",
        file,
        [{ line: error.line, field: "XML", message: `${error.message} (column ${error.column})` }],
        HINT,
      );
    }
    if (error instanceof DirectiveBlockError) {
      throw itemConfigError(
        "config.directive",
        file,
        [{ ...(error.line ? { line: error.line } : {}), field: "file", message: error.message }],
        HINT,
      );
    }
    throw error;
  }
  const raw = readMetadata(block.element);
  const issues: ItemIssue[] = [...raw.issues];
  const parsed = metadataSchema.safeParse(raw.data);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const place = placeOf(raw.places, issue.path.map(String));
      issues.push({ line: place.line, field: place.field, message: issue.message });
    }
  }
  const metadata = parsed.success ? parsed.data : undefined;
  if (metadata && options.expectedName !== undefined && metadata.name !== options.expectedName) {
    const place = placeOf(raw.places, ["name"]);
    issues.push({
      ...place,
      message: `name "${metadata.name}" does not match the file name ${options.expectedName}.md; rename the file or change the name`,
    });
  }
  const inputs = metadata ? buildInputs(metadata.inputs ?? [], raw.places, issues) : [];
  if (issues.length > 0 || !metadata) {
    issues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    throw itemConfigError("config.directive", file, issues, HINT);
  }
  const permissions = Object.fromEntries(
    PERMISSION_KINDS.map((kind) => [
      kind,
      Object.freeze([...(metadata.permissions?.[kind] ?? [])]),
    ]),
  ) as unknown as Permissions;
  const source: ItemSource = {
    path: options.path,
    tier: options.tier ?? "project",
    sha256: options.sha256 ?? createHash("sha256").update(text, "utf8").digest("hex"),
    ...(options.signed ? { signed: { ...options.signed } } : {}),
  };
  return {
    name: metadata.name,
    version: metadata.version,
    description: metadata.description.replace(/\s+/g, " ").trim(),
    ...(metadata.category ? { category: metadata.category } : {}),
    ...(metadata.author ? { author: metadata.author } : {}),
    model: {
      tier: metadata.model?.tier ?? "general",
      ...(metadata.model?.id ? { id: metadata.model.id } : {}),
    },
    limits: buildLimits(metadata.limits ?? {}),
    permissions,
    inputs,
    ...(metadata.summarizer ? { summarizer: metadata.summarizer.directive } : {}),
    body: block.body,
    source,
  };
}

/**
 * Reads and parses the directive file at `path` (see `parseDirective`); the name must match the
 * file name. An unreadable file is a `ConfigError` (`config.directive`) naming it.
 */
export function loadDirectiveFile(
  path: string,
  options: Omit<ParseDirectiveOptions, "path" | "sha256"> = {},
): Directive {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    throw new ConfigError(
      "config.directive",
      `cannot read ${options.display ?? path}: ${describeError(error)}`,
      {
        hint: "Check the path and its permissions",
        cause: error,
      },
    );
  }
  return parseDirective(bytes.toString("utf8"), {
    expectedName: basename(path).replace(/\.md$/, ""),
    ...options,
    path,
    sha256: createHash("sha256").update(bytes).digest("hex"),
  });
}

function placeOf(places: Map<string, FieldPlace>, path: readonly string[]): FieldPlace {
  for (let length = path.length; length >= 0; length--) {
    const place = places.get(path.slice(0, length).join("."));
    if (place) return place;
  }
  return { line: 1, field: "<directive>" };
}

function buildLimits(limits: {
  max_turns?: number | undefined;
  max_tokens?: number | undefined;
  max_spend?: number | undefined;
  max_wall_seconds?: number | undefined;
  max_spawn_depth?: number | undefined;
}): DirectiveLimits {
  const result: DirectiveLimits = {};
  if (limits.max_turns !== undefined) result.maxTurns = limits.max_turns;
  if (limits.max_tokens !== undefined) result.maxTokens = limits.max_tokens;
  if (limits.max_spend !== undefined) result.maxSpendUsd = limits.max_spend;
  if (limits.max_wall_seconds !== undefined) result.maxWallSeconds = limits.max_wall_seconds;
  if (limits.max_spawn_depth !== undefined) result.maxSpawnDepth = limits.max_spawn_depth;
  return result;
}

function buildInputs(
  inputs: readonly {
    name: string;
    type?: DirectiveInput["type"] | undefined;
    required?: "true" | "false" | undefined;
    default?: string | undefined;
    description: string;
  }[],
  places: Map<string, FieldPlace>,
  issues: ItemIssue[],
): DirectiveInput[] {
  const seen = new Set<string>();
  return inputs.map((input, index) => {
    if (seen.has(input.name)) {
      issues.push({
        ...placeOf(places, ["inputs", String(index), "name"]),
        message: `input "${input.name}" is declared twice; keep one`,
      });
    }
    seen.add(input.name);
    const type = input.type ?? "string";
    const result: DirectiveInput = {
      name: input.name,
      type,
      required: input.required === "true",
      description: input.description,
    };
    if (input.default !== undefined) {
      const coerced = coerceInputValue(type, input.default);
      if (coerced.ok) result.default = coerced.value;
      else {
        issues.push({
          ...placeOf(places, ["inputs", String(index), "default"]),
          message: `the default ${coerced.message} (the input's type is ${type})`,
        });
      }
    }
    return result;
  });
}

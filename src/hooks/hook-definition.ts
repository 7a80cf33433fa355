import { z } from "zod";
import type { ItemSource, ItemTier } from "../directives/index.js";
import {
  type ItemIssue,
  isItemName,
  itemConfigError,
  readYamlItem,
  sha256Hex,
  yamlIssue,
  yamlIssues,
} from "../directives/index.js";
import { compileCondition, type HookCondition } from "./hook-condition.js";
import { isMapping, type PathSegment } from "./hook-path.js";
import { checkTemplates } from "./hook-template.js";

/** The events a hook can answer (docs/hooks.md lists each one's payload). */
export const HOOK_EVENTS = [
  "error",
  "limit",
  "context_window_pressure",
  "after_step",
  "after_complete",
  "directive_return",
  "thread.started",
  "thread.completed",
  "thread.suspended",
  "thread.cancelled",
  "thread.continued",
  "stream_chunk_received",
  "stream_source_exhausted",
] as const;

/** One event a hook can answer. */
export type HookEventName = (typeof HOOK_EVENTS)[number];

/** What a hook's action runs: a directive (in a thread) or a tool (`spool.*` are runtime verbs). */
export const HOOK_ITEM_TYPES = ["directive", "tool"] as const;

/** The kind of item a hook's action runs. */
export type HookItemType = (typeof HOOK_ITEM_TYPES)[number];

/** 1: project and user hooks, evaluated first; 2: built-in hooks, evaluated after. */
export type HookLayer = 1 | 2;

/** Where a hook was written: its file (with provenance) and the line of its mapping. */
export interface HookSource extends ItemSource {
  /** The path as messages show it (`.ai/hooks/x.yaml`). */
  display: string;
  /** 1-based line of the hook's `id` in the file. */
  line?: number;
}

/** What a hook does when it fires: run `item_id` of `item_type` with `params`. */
export interface HookAction {
  primary: "execute";
  item_type: HookItemType;
  /** An item name, or a template rendered against the event (`${event.summarizer}`). */
  item_id: string;
  /** Any JSON; strings may hold templates, rendered when the hook fires. Default `{}`. */
  params: unknown;
}

/**
 * How often a hook may fire, measured on the logged times of the events that trigger it (never
 * the wall clock, so a replay holds back the same firings): at least `minIntervalMs` after its
 * previous firing, and at most `maxPerHour` firings in any hour up to and including this one.
 */
export interface HookRateLimit {
  minIntervalMs?: number;
  maxPerHour?: number;
}

/** The events whose firings have a logged time, so a hook on them may have a `rate_limit`. */
export const RATE_LIMITED_EVENTS: readonly HookEventName[] = [
  "stream_chunk_received",
  "stream_source_exhausted",
];

/** A hook that is on: answers `event` when `condition` holds (always, without one). */
export interface HookDefinition {
  id: string;
  enabled: true;
  event: HookEventName;
  layer: HookLayer;
  description?: string;
  /** Compiled (regular expressions included); absent means the hook always matches. */
  condition?: HookCondition;
  /** Absent: the hook fires every time its condition holds. */
  rateLimit?: HookRateLimit;
  action: HookAction;
  source: HookSource;
}

/** `enabled: false`: removes the hook of the same id from lower tiers, and is never evaluated. */
export interface DisabledHook {
  id: string;
  enabled: false;
  layer: HookLayer;
  description?: string;
  source: HookSource;
}

/** One entry of a hook file. */
export type HookEntry = HookDefinition | DisabledHook;

/** Options of `parseHookFile`. */
export interface ParseHookFileOptions {
  /** The file's absolute path. */
  path: string;
  /** How the path is shown in messages; default `path`. */
  display?: string;
  /** The tier the file is in: it sets the default layer (built-in 2, others 1). */
  tier: ItemTier;
  /** sha256 of the file's bytes; default computed from `text`. */
  sha256?: string;
  signed?: { keyId: string };
}

/** The hint of every hook file error. */
export const HOOK_HINT = "Fix each field named; docs/hooks.md describes hook files";

const ID = /^[A-Za-z_][A-Za-z0-9_.-]*$/;

const hookSchema = z.strictObject(
  {
    id: z
      .string({
        error: (issue) =>
          issue.input === undefined
            ? "is missing: name the hook, e.g. id: image_context_pressure"
            : "must be a name, e.g. id: image_context_pressure",
      })
      .regex(ID, "must be letters, digits, _, . and - (a letter or _ first)"),
    event: z.enum(HOOK_EVENTS, { error: `must be one of ${HOOK_EVENTS.join(", ")}` }).optional(),
    layer: z
      .literal([1, 2], { error: "must be 1 (project and user hooks) or 2 (built-in hooks)" })
      .optional(),
    description: z.string({ error: "must be text" }).optional(),
    enabled: z.boolean({ error: "must be true or false" }).optional(),
    condition: z.unknown().optional(),
    rate_limit: z
      .strictObject(
        {
          min_interval_ms: z
            .number({ error: "must be a number of milliseconds, e.g. min_interval_ms: 60000" })
            .int("must be a whole number of milliseconds, e.g. min_interval_ms: 60000")
            .positive("must be more than 0, e.g. min_interval_ms: 60000")
            .optional(),
          max_per_hour: z
            .number({ error: "must be a whole number, e.g. max_per_hour: 10" })
            .int("must be a whole number, e.g. max_per_hour: 10")
            .min(1, "must be at least 1, e.g. max_per_hour: 10")
            .optional(),
        },
        {
          error: (issue) =>
            issue.code === "unrecognized_keys"
              ? "a rate_limit has min_interval_ms and max_per_hour (check the spelling)"
              : "must be a mapping, e.g. rate_limit: { min_interval_ms: 60000 }",
        },
      )
      .optional(),
    action: z
      .strictObject(
        {
          primary: z
            .literal("execute", { error: 'must be "execute" (the only action there is)' })
            .optional(),
          item_type: z.enum(HOOK_ITEM_TYPES, {
            error: `must be ${HOOK_ITEM_TYPES.join(" or ")}, e.g. item_type: directive`,
          }),
          item_id: z
            .string({ error: "must name the directive or tool, e.g. item_id: image_summarizer" })
            .min(1, "must name the directive or tool, e.g. item_id: image_summarizer"),
          params: z.unknown().optional(),
        },
        {
          error: (issue) =>
            issue.code === "unrecognized_keys"
              ? "an action has primary, item_type, item_id, params (check the spelling)"
              : "must be a mapping, e.g. { primary: execute, item_type: directive, item_id: x }",
        },
      )
      .optional(),
  },
  {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? "a hook has id, event, layer, description, enabled, condition, rate_limit, action (check the spelling)"
        : "a hook must be a mapping with id, event, condition, action",
  },
);

/**
 * Parses a hook file: one hook mapping, or a list of them (an empty file holds none). Checks
 * everything a hook needs before it can run: the event, the layer against the tier (only
 * built-in hooks may be layer 2), the condition (operands, paths, regular expressions compiled
 * here), the templates of `item_id` and `params`, ids unique in the file. Throws one
 * `ConfigError` (`config.hook`) listing every problem as `file:line: field: message`.
 */
export function parseHookFile(text: string, options: ParseHookFileOptions): HookEntry[] {
  const file = options.display ?? options.path;
  const { document, counter, data } = readYamlItem(text, file, "config.hook", HOOK_HINT);
  const issues: ItemIssue[] = [];
  const locate = (path: PathSegment[], message: string) =>
    issues.push(yamlIssue(document, counter, path, message));
  if (data !== null && data !== undefined && !Array.isArray(data) && !isMapping(data)) {
    locate([], "a hook file holds one hook mapping or a list of them (docs/hooks.md)");
  }
  const raws: [unknown, PathSegment[]][] = Array.isArray(data)
    ? data.map((raw, index) => [raw, [index]])
    : isMapping(data)
      ? [[data, []]]
      : [];
  const source: Omit<HookSource, "line"> = {
    path: options.path,
    tier: options.tier,
    sha256: options.sha256 ?? sha256Hex(text),
    display: file,
    ...(options.signed ? { signed: { ...options.signed } } : {}),
  };
  const entries: HookEntry[] = [];
  const seen = new Map<string, number | undefined>();
  for (const [raw, at] of raws) {
    const before = issues.length;
    const compiled =
      isMapping(raw) && raw.condition !== undefined ? compileCondition(raw.condition) : undefined;
    for (const issue of compiled?.issues ?? [])
      locate([...at, "condition", ...issue.path], issue.message);
    const parsed = hookSchema.safeParse(raw);
    if (!parsed.success) {
      issues.push(...yamlIssues(parsed.error, document, counter, at));
      continue;
    }
    const hook = parsed.data;
    const condition = compiled?.condition;
    const line = yamlIssue(document, counter, [...at, "id"], "").line;
    const layer: HookLayer = hook.layer ?? (options.tier === "builtin" ? 2 : 1);
    if (hook.layer === 2 && options.tier !== "builtin") {
      locate(
        [...at, "layer"],
        `only built-in hooks are layer 2; a ${options.tier} hook is layer 1 (remove layer, or write layer: 1)`,
      );
    }
    const earlier = seen.get(hook.id);
    if (seen.has(hook.id)) {
      locate(
        [...at, "id"],
        `"${hook.id}" is also the id of the hook at line ${earlier}: ids are unique (rename one)`,
      );
    }
    seen.set(hook.id, line);
    const enabled = hook.enabled !== false;
    if (enabled && hook.event === undefined) {
      locate(
        [...at, "event"],
        `is missing: the event the hook answers, one of ${HOOK_EVENTS.join(", ")}`,
      );
    }
    if (enabled && hook.action === undefined) {
      locate(
        [...at, "action"],
        "is missing: what the hook runs, e.g. action: { primary: execute, item_type: directive, item_id: summarize }",
      );
    }
    const limit = hook.rate_limit;
    if (limit && limit.min_interval_ms === undefined && limit.max_per_hour === undefined) {
      locate(
        [...at, "rate_limit"],
        "names no limit: give min_interval_ms, max_per_hour or both, e.g. rate_limit: { min_interval_ms: 60000 }",
      );
    }
    if (limit && hook.event !== undefined && !RATE_LIMITED_EVENTS.includes(hook.event)) {
      locate(
        [...at, "rate_limit"],
        `is only for ${RATE_LIMITED_EVENTS.join(" and ")} (their firings have a logged time); remove it from this ${hook.event} hook`,
      );
    }
    if (hook.action) {
      const id = hook.action.item_id;
      if (id.includes("${")) {
        for (const issue of checkTemplates(id)) locate([...at, "action", "item_id"], issue.message);
      } else if (!isItemName(id)) {
        locate(
          [...at, "action", "item_id"],
          `must be a directive or tool name (letters, digits, _ . - and /) or a template such as \${event.summarizer}`,
        );
      }
      for (const issue of checkTemplates(hook.action.params, [...at, "action", "params"])) {
        locate(issue.path, issue.message);
      }
    }
    if (issues.length > before) continue;
    const common = {
      id: hook.id,
      layer,
      ...(hook.description !== undefined ? { description: hook.description } : {}),
      source: { ...source, ...(line ? { line } : {}) },
    };
    if (!enabled || !hook.event || !hook.action) {
      entries.push({ ...common, enabled: false });
      continue;
    }
    entries.push({
      ...common,
      enabled: true,
      event: hook.event,
      ...(condition ? { condition } : {}),
      ...(limit ? { rateLimit: rateLimitOf(limit) } : {}),
      action: {
        primary: "execute",
        item_type: hook.action.item_type,
        item_id: hook.action.item_id,
        params: hook.action.params ?? {},
      },
    });
  }
  if (issues.length > 0) {
    issues.sort((a, b) => (a.line ?? 0) - (b.line ?? 0));
    throw itemConfigError("config.hook", file, issues, HOOK_HINT);
  }
  return entries;
}

function rateLimitOf(limit: { min_interval_ms?: number; max_per_hour?: number }): HookRateLimit {
  return {
    ...(limit.min_interval_ms !== undefined ? { minIntervalMs: limit.min_interval_ms } : {}),
    ...(limit.max_per_hour !== undefined ? { maxPerHour: limit.max_per_hour } : {}),
  };
}

/**
 * The order hooks of one event are evaluated in: layer 1 before layer 2, each by id (code-unit
 * order, so the same on every machine).
 */
export function compareHookOrder(
  a: Pick<HookEntry, "layer" | "id">,
  b: Pick<HookEntry, "layer" | "id">,
): number {
  if (a.layer !== b.layer) return a.layer - b.layer;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

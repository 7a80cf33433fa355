import type { ItemSource } from "./item-source.js";
import type { Permissions } from "./permissions.js";

/** The model tiers a directive can ask for; `config.yaml` maps each to a concrete model. */
export const MODEL_TIERS = ["fast", "general", "high"] as const;

/** One of `MODEL_TIERS`. */
export type ModelTier = (typeof MODEL_TIERS)[number];

/** The model a directive asks for: a tier, and optionally a concrete model id that wins over it. */
export interface ModelChoice {
  tier: ModelTier;
  /** A concrete model (`claude-haiku-4-5`); when absent the tier's model in the config is used. */
  id?: string;
}

/**
 * A directive's limits, from `<limits max_turns= max_tokens= max_spend= max_wall_seconds=
 * max_spawn_depth=/>`. An absent limit is unlimited. The runtime ends a run that reaches one
 * (and raises the `limit` hook).
 */
export interface DirectiveLimits {
  /** Model calls (steps) in one run; a whole number of at least 1. */
  maxTurns?: number;
  /** Tokens (input + output) over the run; a whole number of at least 1. */
  maxTokens?: number;
  /** Spend over the run, in US dollars; 0 or more. */
  maxSpendUsd?: number;
  /** Wall-clock seconds for the run; more than 0. */
  maxWallSeconds?: number;
  /** How deep `agent` actions may nest below this run; a whole number, 0 for none. */
  maxSpawnDepth?: number;
}

/** The types a directive input can declare. `integer` is a `number` that must be whole. */
export const INPUT_TYPES = ["string", "number", "integer", "boolean", "json"] as const;

/** One of `INPUT_TYPES`. */
export type InputType = (typeof INPUT_TYPES)[number];

/** A value of a directive input after coercion to its declared type. */
export type InputValue =
  | string
  | number
  | boolean
  | null
  | InputValue[]
  | { [key: string]: InputValue };

/** One declared input: `<input name= type= required= default=>description</input>`. */
export interface DirectiveInput {
  name: string;
  type: InputType;
  /** Whether a run must supply it (an input with a default is never missing). Default false. */
  required: boolean;
  /** The default, already coerced to `type`; absent when none was declared. */
  default?: InputValue;
  /** What the input is for (the element's text). */
  description: string;
}

/**
 * A parsed directive file: the metadata block, validated, and the markdown around it as the
 * instructions (`body`). Produced by `parseDirective`; never partially valid.
 */
export interface Directive {
  /** The directive's name; equal to its file name without `.md`. */
  name: string;
  /** A semantic version, e.g. `1.0.0`. */
  version: string;
  description: string;
  category?: string;
  author?: string;
  model: ModelChoice;
  limits: DirectiveLimits;
  permissions: Permissions;
  inputs: DirectiveInput[];
  /** The summarizer directive its handoffs should use (`<summarizer directive="…"/>`). */
  summarizer?: string;
  /** The instructions: everything in the file outside the metadata block, trimmed. */
  body: string;
  source: ItemSource;
}

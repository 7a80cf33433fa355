/**
 * Hooks: YAML rules that answer runtime events (errors, limits, context pressure, thread
 * lifecycle, source streams) by running a directive or a tool. Files live in the three item tiers
 * (`.ai/hooks/`, `~/.ai/hooks/`, built-in `hooks/`); this module parses, layers and evaluates
 * them and knows nothing of the runtime that acts on the firings. docs/hooks.md describes them.
 */

/** Conditions: compiling (with located problems) and evaluating them. */
export {
  CONDITION_OPS,
  type ConditionLeaf,
  type ConditionOp,
  compileCondition,
  evaluateCondition,
  type HookCondition,
} from "./hook-condition.js";
/** Hook files: the format, its vocabularies and the parser. */
export {
  compareHookOrder,
  type DisabledHook,
  HOOK_EVENTS,
  HOOK_ITEM_TYPES,
  type HookAction,
  type HookDefinition,
  type HookEntry,
  type HookEventName,
  type HookItemType,
  type HookLayer,
  type HookRateLimit,
  type HookSource,
  type ParseHookFileOptions,
  parseHookFile,
  RATE_LIMITED_EVENTS,
} from "./hook-definition.js";
/** Evaluating hooks against events, edge-triggered where asked. */
export {
  createHookEngine,
  type HookEngine,
  type HookEngineOptions,
  type HookFiring,
} from "./hook-engine.js";
/** Payload paths (`error.details.attempts[0].code`). */
export {
  type FieldIssue,
  isMapping,
  type PathLookup,
  type PathSegment,
  parsePath,
  readPath,
} from "./hook-path.js";
/** The payload each event carries. */
export type {
  AfterCompleteHookPayload,
  AfterStepHookPayload,
  ContextPressureHookPayload,
  DirectiveReturnHookPayload,
  ErrorHookPayload,
  HookPayload,
  HookPayloads,
  LimitHookPayload,
  StreamChunkHookPayload,
  StreamExhaustedHookPayload,
  ThreadHookPayload,
} from "./hook-payloads.js";
/** Loading and layering the tiers' hook files. */
export {
  type HookFile,
  type HookSet,
  type LoadHooksOptions,
  layerHooks,
  loadHooks,
  parseHookFiles,
} from "./hook-registry.js";
/** Templates in params: `${event.path || 'fallback'}`. */
export {
  checkTemplates,
  parseTemplate,
  renderTemplates,
  renderText,
  type TemplateAlternative,
  type TemplatePart,
  TemplateSyntaxError,
} from "./hook-template.js";

/**
 * Directives and the items around them: directive files (markdown with an XML metadata block),
 * agent manifests, `config.yaml`, `coordination.yaml`, the three tiers of item spaces (project
 * `.ai/`, user `~/.ai/`, built-in), permissions, limits and whole-file signatures.
 * docs/directives.md describes the formats.
 */

/** Agent manifests (`agents/<name>.yaml`): `parseAgentManifest` and its types. */
export {
  type AgentManifest,
  type ParseAgentManifestOptions,
  parseAgentManifest,
  type ToolSetting,
} from "./agent-manifest.js";
/** Where Spool's own `builtin/` folder is. */
export { findBuiltinDir } from "./builtin-dir.js";
/** `coordination.yaml`: the handoff pipeline's settings, one tier parsed, tiers merged. */
export {
  CONTINUATION_DEFAULTS,
  type ContinuationConfig,
  type CoordinationConfig,
  type CoordinationLayer,
  mergeCoordinationLayers,
  parseCoordinationLayer,
  type SummarizerBudget,
  type SummaryLimits,
} from "./coordination-config.js";
/** The merge rule of configs across tiers. */
export { deepMerge } from "./deep-merge.js";
/** The `Directive` type and the vocabularies its fields use. */
export {
  type Directive,
  type DirectiveInput,
  type DirectiveLimits,
  INPUT_TYPES,
  type InputType,
  type InputValue,
  MODEL_TIERS,
  type ModelChoice,
  type ModelTier,
} from "./directive.js";
/** Parsing directive files. */
export { loadDirectiveFile, type ParseDirectiveOptions, parseDirective } from "./directive-file.js";
/** Checking and coercing a run's inputs. */
export {
  type Coerced,
  checkInputs,
  coerceInputValue,
  parseInputArgs,
} from "./directive-inputs.js";
/** Item names and the layout of a space. */
export {
  CONFIG_FILE,
  COORDINATION_FILE,
  isItemName,
  isRootFileKind,
  KIND_LAYOUT,
  listItemFiles,
  ROOT_FILES,
  type RootFileKind,
  type SpaceRoot,
} from "./item-files.js";
/** How item errors are formatted. */
export {
  displayPath,
  type ItemConfigErrorCode,
  type ItemIssue,
  itemConfigError,
  yamlIssue,
  yamlIssues,
} from "./item-issues.js";
/** Signing items and checking their signatures. */
export {
  checkItemSignature,
  ITEM_SIGNATURE_FORMAT,
  type ItemSignature,
  type ItemSignatureCheck,
  ItemTrustError,
  type ItemTrustReason,
  itemSigningText,
  readSignedItem,
  SIGNATURE_SUFFIX,
  type SignItemOptions,
  sha256Hex,
  signItemFile,
} from "./item-signing.js";
/** Tiers, kinds and the provenance of a loaded item. */
export {
  ITEM_KINDS,
  ITEM_TIERS,
  type ItemKind,
  type ItemSource,
  type ItemTier,
} from "./item-source.js";
/** The three-tier item space. */
export {
  createItemSpace,
  type ItemCheck,
  type ItemListing,
  type ItemSpace,
  type ItemSpaceOptions,
} from "./item-space.js";
/** Limits: combining a directive's with a manifest's, and checking usage against them. */
export {
  effectiveLimits,
  LIMIT_NAMES,
  type LimitName,
  type LimitUsage,
  type ReachedLimit,
  reachedLimit,
} from "./limits.js";
/** Permissions: glob matching and refusals. */
export {
  checkPermission,
  deniedMessage,
  globToRegExp,
  matchesGlob,
  NO_PERMISSIONS,
  PERMISSION_KINDS,
  PermissionDeniedError,
  type PermissionKind,
  type Permissions,
  permits,
} from "./permissions.js";
/** `config.yaml`: parsing one tier, merging tiers, picking a model. */
export {
  type ConfigLayer,
  mergeConfigLayers,
  modelFor,
  parseConfigLayer,
  type SpaceConfig,
  type ToolDefaults,
} from "./space-config.js";
/** Whether an agent may call a tool, and with which options. */
export { resolveToolAccess, type ToolAccess, type ToolAccessContext } from "./tool-access.js";
export { readYamlItem } from "./yaml-item.js";

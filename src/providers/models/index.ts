export {
  type CallCost,
  costOf,
  createModelCatalogue,
  MODEL_FORMATS,
  type ModelCatalogue,
  type ModelFormat,
  type ModelInfo,
  type ModelOverride,
  type ModelPricing,
  type ModelProvider,
  pressureRatio,
  TOKENIZERS,
  type Tokenizer,
} from "./model-catalogue.js";
export { BUILT_IN_MODELS } from "./model-data.js";
export { deprecationNotice } from "./model-deprecation.js";
export {
  assumedWindowNotice,
  CONFIGURED_PROVIDER,
  type ModelInfoSetting,
  type ModelWindow,
  type ModelWindowInputs,
  modelInfoOverrides,
  parseContextWindowEnv,
  resolveModelWindow,
  type ServerModelDescription,
  UNKNOWN_MODEL_OUTPUT,
  UNKNOWN_MODEL_WINDOW,
  WINDOW_SOURCES,
  type WindowSource,
  windowNeedsServer,
} from "./model-window.js";
export {
  DISCOVERY_TIMEOUT_MS,
  type DiscoveryKind,
  type DiscoveryOptions,
  discoverModelWindow,
} from "./window-discovery.js";

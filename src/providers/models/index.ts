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

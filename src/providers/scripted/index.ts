export {
  createScriptedProvider,
  type ScriptedProvider,
  type ScriptedProviderOptions,
  type ScriptedTokens,
  splitTokens,
} from "./scripted-provider.js";
export {
  loadScript,
  type ScriptedTurn,
  scriptedTurnSchema,
  scriptFileSchema,
} from "./scripted-script.js";

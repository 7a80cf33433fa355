export {
  describeSettings,
  displayURL,
  maskKey,
  settingsJSON,
} from "./describe-settings.js";
export {
  type ProviderSettings,
  type ProviderSettingsInput,
  type ResolveSettingsOptions,
  resolveProviderSettings,
  type SettingsEnv,
  type SettingsSources,
} from "./provider-settings.js";
export {
  isProviderName,
  KEY_INFERENCE_ORDER,
  PROVIDER_ALIASES,
  PROVIDER_DEFAULTS,
  PROVIDER_NAMES,
  type ProviderDefaults,
  type ProviderName,
} from "./provider-table.js";
export {
  isProviderConfigured,
  misspelledVariables,
  PROVIDER_VARIABLES,
  providerVariablesSet,
} from "./settings-errors.js";

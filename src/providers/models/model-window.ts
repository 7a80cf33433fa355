import { ConfigError } from "../../spec/index.js";
import type { ModelCatalogue, ModelOverride } from "./model-catalogue.js";

/**
 * The window Spool assumes for a model nothing tells it about: small enough that a local
 * server's default (Ollama's, llama.cpp's) is not overrun, so a thread hands off in time rather
 * than failing every turn once it outgrows the server.
 */
export const UNKNOWN_MODEL_WINDOW = 8_192;
/** The output limit Spool assumes for a model nothing tells it about. */
export const UNKNOWN_MODEL_OUTPUT = 2_048;

/** Where a model's window came from, highest precedence first. */
export const WINDOW_SOURCES = ["env", "config", "server", "catalogue", "default"] as const;
/** One of `WINDOW_SOURCES`. */
export type WindowSource = (typeof WINDOW_SOURCES)[number];

/** One `model_info:` entry of config.yaml, as the catalogue and the window resolution take it. */
export interface ModelInfoSetting {
  contextWindow?: number;
  maxOutputTokens?: number;
  /** USD per million tokens. */
  inputPerMTok?: number;
  outputPerMTok?: number;
  cachedPerMTok?: number;
}

/** What a server said about a model it serves (`Provider.describeModel`). */
export interface ServerModelDescription {
  contextWindow: number;
  maxOutputTokens?: number;
  /** Where it was read, e.g. `vllm GET /v1/models max_model_len`. */
  detail: string;
}

/** The window and output limit a run uses for a model, and where they came from. */
export interface ModelWindow {
  model: string;
  contextWindow: number;
  maxOutputTokens: number;
  source: WindowSource;
  /** What the source said, for the log (`SPOOL_CONTEXT_WINDOW`, `ollama POST /api/show …`). */
  detail: string;
}

/** What `resolveModelWindow` decides from. */
export interface ModelWindowInputs {
  model: string;
  catalogue: ModelCatalogue;
  /** `SPOOL_CONTEXT_WINDOW`, parsed (`parseContextWindowEnv`). */
  envWindow?: number;
  /** The `model_info:` entries of config.yaml, by model id. */
  configured?: Readonly<Record<string, ModelInfoSetting>>;
  /** What the server answered, when it was asked. */
  server?: ServerModelDescription;
}

/**
 * The window of `model`, by precedence: `SPOOL_CONTEXT_WINDOW` > config.yaml `model_info` > the
 * server's answer > the built-in catalogue > `UNKNOWN_MODEL_WINDOW`. The output limit comes from
 * the first of config, server and catalogue that sets it, and never exceeds a quarter of a window
 * Spool had to assume. Pure.
 */
export function resolveModelWindow(inputs: ModelWindowInputs): ModelWindow {
  const { model, catalogue, envWindow, server } = inputs;
  const configured = configuredFor(model, inputs.configured, catalogue);
  const known = catalogue.lookup(model);
  const catalogued = known && known.provider !== CONFIGURED_PROVIDER ? known : undefined;
  const output =
    configured?.maxOutputTokens ?? server?.maxOutputTokens ?? catalogued?.maxOutputTokens;
  const pick = (contextWindow: number, source: WindowSource, detail: string): ModelWindow => ({
    model,
    contextWindow,
    maxOutputTokens: Math.min(
      output ?? Math.min(UNKNOWN_MODEL_OUTPUT, Math.floor(contextWindow / 4)),
      contextWindow,
    ),
    source,
    detail,
  });
  if (envWindow !== undefined) return pick(envWindow, "env", "SPOOL_CONTEXT_WINDOW");
  if (configured?.contextWindow !== undefined) {
    return pick(configured.contextWindow, "config", `config.yaml model_info`);
  }
  if (server) return pick(server.contextWindow, "server", server.detail);
  if (catalogued) return pick(catalogued.contextWindow, "catalogue", "Spool's model catalogue");
  return pick(UNKNOWN_MODEL_WINDOW, "default", "no source knows this model");
}

/** Whether the server is worth asking: only when neither the environment nor config.yaml decide. */
export function windowNeedsServer(inputs: Omit<ModelWindowInputs, "server">): boolean {
  if (inputs.envWindow !== undefined) return false;
  return (
    configuredFor(inputs.model, inputs.configured, inputs.catalogue)?.contextWindow === undefined
  );
}

/** The one line a run shows when it had to assume a window: what it assumed and how to say. */
export function assumedWindowNotice(window: ModelWindow): string {
  return `The context window of ${window.model} is unknown: assuming ${window.contextWindow} tokens. If it is larger, say so in .ai/config.yaml: model_info: { "${window.model}": { context_window: <tokens> } } (or set SPOOL_CONTEXT_WINDOW).`;
}

/**
 * `SPOOL_CONTEXT_WINDOW` as a number of tokens, or undefined when unset. Throws `ConfigError`
 * `config.context-window` when it is set to anything but a whole number from 1,024 up.
 */
export function parseContextWindowEnv(env: Record<string, string | undefined>): number | undefined {
  const raw = env.SPOOL_CONTEXT_WINDOW;
  if (raw === undefined || raw.trim() === "") return undefined;
  const digits = raw.trim();
  const value = /^\d[\d_]*$/.test(digits) ? Number(digits.replace(/_/g, "")) : Number.NaN;
  if (!Number.isInteger(value) || value < 1024 || value > 100_000_000) {
    throw new ConfigError(
      "config.context-window",
      `SPOOL_CONTEXT_WINDOW must be a whole number of tokens from 1024 up (it is "${raw.slice(0, 40)}")`,
      {
        hint: "Set it to the model's context window, e.g. SPOOL_CONTEXT_WINDOW=32768, or unset it",
      },
    );
  }
  return value;
}

/** The `provider` of a catalogue entry made from `model_info` for a model Spool does not know. */
export const CONFIGURED_PROVIDER = "configured";

/**
 * The catalogue overrides `model_info` entries make: a known model's window, output limit and
 * prices; for a model Spool does not know, an entry (reached through the OpenAI chat format) only
 * when both its input and output prices are given, so its calls are priced. Its window is not
 * taken from that entry: `resolveModelWindow` still asks the server first.
 */
export function modelInfoOverrides(
  configured: Readonly<Record<string, ModelInfoSetting>>,
  catalogue: ModelCatalogue,
): Record<string, ModelOverride> {
  const overrides: Record<string, ModelOverride> = {};
  for (const [id, entry] of Object.entries(configured)) {
    const pricing = {
      ...(entry.inputPerMTok !== undefined ? { inputPerMTok: entry.inputPerMTok } : {}),
      ...(entry.outputPerMTok !== undefined ? { outputPerMTok: entry.outputPerMTok } : {}),
      ...(entry.cachedPerMTok !== undefined ? { cacheReadPerMTok: entry.cachedPerMTok } : {}),
    };
    const limits = {
      ...(entry.contextWindow !== undefined ? { contextWindow: entry.contextWindow } : {}),
      ...(entry.maxOutputTokens !== undefined ? { maxOutputTokens: entry.maxOutputTokens } : {}),
    };
    const known = catalogue.lookup(id);
    if (known) {
      // A smaller window than the catalogue's keeps room for input: output a quarter of it at most.
      if (limits.contextWindow !== undefined && limits.maxOutputTokens === undefined) {
        if (known.maxOutputTokens > limits.contextWindow) {
          Object.assign(limits, { maxOutputTokens: Math.floor(limits.contextWindow / 4) });
        }
      }
      overrides[id] = { ...limits, ...(Object.keys(pricing).length > 0 ? { pricing } : {}) };
    } else if (entry.inputPerMTok !== undefined && entry.outputPerMTok !== undefined) {
      const contextWindow = entry.contextWindow ?? UNKNOWN_MODEL_WINDOW;
      overrides[id] = {
        provider: CONFIGURED_PROVIDER,
        format: "openai-chat",
        contextWindow,
        maxOutputTokens: Math.min(entry.maxOutputTokens ?? UNKNOWN_MODEL_OUTPUT, contextWindow),
        pricing,
      };
    }
  }
  return overrides;
}

/** The `model_info` entry for `model`: by its exact id, else by the catalogue model both name. */
function configuredFor(
  model: string,
  configured: Readonly<Record<string, ModelInfoSetting>> | undefined,
  catalogue: ModelCatalogue,
): ModelInfoSetting | undefined {
  if (!configured) return undefined;
  const id = model.trim().toLowerCase();
  for (const [key, entry] of Object.entries(configured)) {
    if (key.trim().toLowerCase() === id) return entry;
  }
  const target = catalogue.lookup(model);
  if (!target) return undefined;
  for (const [key, entry] of Object.entries(configured)) {
    if (catalogue.lookup(key)?.id === target.id) return entry;
  }
  return undefined;
}

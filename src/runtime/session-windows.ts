import type { EventStore } from "../log/index.js";
import {
  assumedWindowNotice,
  deprecationNotice,
  type ModelCatalogue,
  type ModelInfoSetting,
  type ModelWindow,
  type Provider,
  resolveModelWindow,
  windowNeedsServer,
} from "../providers/index.js";
import { notify } from "./agent-step.js";
import type { RunObserver } from "./run-notice.js";

/** What the environment and config.yaml say of models' windows. */
export interface ModelWindowSettings {
  /** `SPOOL_CONTEXT_WINDOW`, parsed (`parseContextWindowEnv`): wins over everything. */
  envWindow?: number;
  /** config.yaml's `model_info:` entries, by model id. */
  configured?: Readonly<Record<string, ModelInfoSetting>>;
  /**
   * A replay's recorded windows: the next window the log recorded for `model`
   * (`model.described`), which is then the window, whatever the environment, config.yaml or a
   * server would say now. Nothing is asked.
   */
  recorded?: (model: string) => ModelWindow | undefined;
}

/** What `SessionWindows` needs. */
export interface SessionWindowsOptions {
  store: EventStore;
  continuity: string;
  provider: Provider;
  catalogue: ModelCatalogue;
  settings?: ModelWindowSettings;
  observer?: RunObserver;
  /** Today as `YYYY-MM-DD`, for deprecation notices (default: the UTC date now). */
  today?: () => string;
}

/**
 * The windows of the models one continuity's runs use. Before a model's first run in the
 * session, `describe` resolves its window (`resolveModelWindow`: environment, config.yaml, the
 * server asked once, the catalogue, or an assumed window), logs it as `model.described` on the
 * run's thread, and tells the observer once when the window was assumed or the model is
 * deprecated. The environment, config.yaml and the server are the world outside the run: a
 * replay takes each window from the log (`ModelWindowSettings.recorded`).
 */
export class SessionWindows {
  private readonly options: SessionWindowsOptions;
  private readonly described = new Map<string, Promise<ModelWindow>>();
  private readonly resolved = new Map<string, ModelWindow>();

  constructor(options: SessionWindowsOptions) {
    this.options = options;
  }

  /**
   * The window of `model` as known now, without asking a server: its described window, else
   * what the environment, config.yaml and the catalogue say (for budgets outside a run).
   */
  known(model: string): ModelWindow {
    return this.resolved.get(model) ?? resolveModelWindow(this.inputs(model));
  }

  /** The window of `model`, described (and logged on `thread`) at its first use in the session. */
  describe(model: string, thread: string, signal?: AbortSignal): Promise<ModelWindow> {
    let found = this.described.get(model);
    if (!found) {
      found = this.first(model, thread, signal);
      this.described.set(model, found);
    }
    return found;
  }

  private async first(model: string, thread: string, signal?: AbortSignal): Promise<ModelWindow> {
    const { provider, store, continuity, observer } = this.options;
    const inputs = this.inputs(model);
    const recorded = this.options.settings?.recorded?.(model);
    const server =
      !recorded && windowNeedsServer(inputs) && provider.describeModel
        ? await provider.describeModel(model, signal ? { signal } : {}).catch(() => undefined)
        : undefined;
    const window = recorded ?? resolveModelWindow({ ...inputs, ...(server ? { server } : {}) });
    await store.append({
      continuity,
      stream: { kind: "thread", id: thread },
      type: "model.described",
      data: {
        model,
        context_window: window.contextWindow,
        max_output_tokens: window.maxOutputTokens,
        source: window.source,
        detail: window.detail.slice(0, 500),
      },
    });
    this.resolved.set(model, window);
    if (window.source === "default") {
      notify(observer, { type: "model-notice", model, text: assumedWindowNotice(window) });
    }
    const info = this.options.catalogue.lookup(model);
    const today = this.options.today?.() ?? new Date().toISOString().slice(0, 10);
    const deprecated = info ? deprecationNotice(info, today) : undefined;
    if (deprecated) notify(observer, { type: "model-notice", model, text: deprecated });
    return window;
  }

  private inputs(model: string) {
    const { catalogue, settings } = this.options;
    return {
      model,
      catalogue,
      ...(settings?.envWindow !== undefined ? { envWindow: settings.envWindow } : {}),
      ...(settings?.configured ? { configured: settings.configured } : {}),
    };
  }
}

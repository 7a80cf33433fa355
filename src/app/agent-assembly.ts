import { join } from "node:path";
import type { AnyTool } from "../actions/index.js";
import { type AgentBrowser, agentBrowser, type BrowserRelic } from "../browser/index.js";
import { BROWSER_SUMMARIZER, IMAGE_SUMMARIZER, selectSummarizer } from "../continuity/index.js";
import {
  type AgentManifest,
  checkInputs,
  createItemSpace,
  type Directive,
  displayPath,
  effectiveLimits,
  findBuiltinDir,
  type ItemSpace,
  modelFor,
  permits,
  resolveToolAccess,
} from "../directives/index.js";
import { parseFeedManifest } from "../feeds/index.js";
import type { AgentWatchSettings } from "../frames/index.js";
import { loadHooks } from "../hooks/index.js";
import type { EventStore } from "../log/index.js";
import { agentMcp, type PreparedMcp } from "../mcp/index.js";
import { type MemoryIndex, memorySearchTool } from "../memory/index.js";
import type { Provider } from "../providers/index.js";
import {
  createModelCatalogue,
  createProvider,
  createScriptedProvider,
  isProviderConfigured,
  isProviderName,
  loadScript,
  modelInfoOverrides,
  type ProviderName,
  type ProviderSettings,
  parseContextWindowEnv,
  resolveProviderSettings,
} from "../providers/index.js";
import {
  createHttpRelic,
  createKvRelic,
  createRelicExecutor,
  createRelicHost,
  type RelicHost,
} from "../relics/index.js";
import {
  type AgentRuntimeOptions,
  type AgentSpec,
  fillInputs,
  type RunLimits,
} from "../runtime/index.js";
import { DEFAULT_SOURCE_ADAPTERS, type SourceAdapters } from "../sources/index.js";
import { ConfigError } from "../spec/index.js";
import { BUILTIN_TOOL_NAMES, builtinTools, formatToolCatalogue } from "../tools/index.js";
import { createWorkflowExecutor, workflowDirectory } from "../workflows/index.js";
import { agentSources } from "./agent-sources.js";
import { agentWatch } from "./agent-watch.js";
import { describeCapabilities } from "./capabilities.js";

/** What `assembleAgent` needs. */
export interface AssembleOptions {
  workspace: string;
  store: EventStore;
  continuity: string;
  env: Record<string, string | undefined>;
  /** The home directory of the user tier (`~/.ai/`). Default `os.homedir()`. */
  home?: string;
  /** An agent manifest to run (its directive, tools and limits). */
  agent?: string;
  /** A directive to run (default: the manifest's, else `assistant`). */
  directive?: string;
  /**
   * Inputs of the directive, as `k=v` strings (from the command line) or values: checked and
   * coerced to their declared types (`checkInputs`), defaults applied; a bad one is a ConfigError.
   */
  inputs?: Record<string, unknown>;
  /** A provider to use instead of the one the environment names (tests, replay). */
  provider?: Provider;
  /** The model id to use with `provider` (replay passes the one the log recorded). */
  model?: string;
  /**
   * The adapter of each source kind the manifest's sources (and the model's) may use; a source of
   * a kind without one fails with `source.no-adapter` when it starts. Default the real ones
   * (`DEFAULT_SOURCE_ADAPTERS`).
   */
  sourceAdapters?: SourceAdapters;
  /**
   * The agent's MCP servers and their tools (`prepareAgentMcp`): each server becomes a relic and
   * its permitted tools `mcp.<server>.<tool>` tools. None when absent.
   */
  mcp?: PreparedMcp;
  /**
   * The store's memory index: the agent gets the tool `memory.search` over it when its
   * directive's <permissions> grant that tool, and a `memory` context feed of its manifest
   * searches it. None when absent.
   */
  memoryIndex?: MemoryIndex;
}

/** An agent ready to run: the runtime's options and what to tell the user about it. */
export interface AssembledAgent {
  options: Omit<AgentRuntimeOptions, "store" | "observer">;
  directive: Directive;
  /** `anthropic`, `openai`, `scripted`, … */
  providerName: string;
  model: string;
  /** True when nothing configured a provider and the built-in demo runs on the scripted provider. */
  demo: boolean;
  /** Why the demo runs (the one line to show), when it does. */
  demoReason?: string;
  space: ItemSpace;
  /** The stream-watch settings of a manifest with a `watch:` section (docs/stream-watch.md). */
  watch?: AgentWatchSettings;
  /** The browser relic of a manifest with a `browser:` section (a `screencast` watch source's tab). */
  browser?: BrowserRelic;
  /** Stops the relics. */
  close(): Promise<void>;
}

/**
 * Puts an agent together from the item spaces and the environment: the directive (and agent
 * manifest), the provider and the concrete model of the directive's tier, the built-in tools the
 * directive permits and the manifest enables, the kv relic, the project's workflows, and the
 * directives `agent` actions may run. When no provider variable is set at all
 * (`isProviderConfigured` is false) it runs the built-in demo agent on the scripted provider
 * instead, and says so in `demoReason`; a configuration that is set but does not resolve (an
 * unknown provider, a bad base URL, a provider without a model) throws its `ConfigError`.
 */
export function assembleAgent(options: AssembleOptions): AssembledAgent {
  const space = createItemSpace({
    workspace: options.workspace,
    env: options.env,
    ...(options.home !== undefined ? { home: options.home } : {}),
  });
  const config = space.config();
  // config.yaml's model_info prices and limits, over the built-in catalogue; SPOOL_CONTEXT_WINDOW
  // over every window (a bad value is a ConfigError here, before anything runs).
  const envWindow = parseContextWindowEnv(options.env);
  const catalogue = createModelCatalogue(
    modelInfoOverrides(config.modelInfo, createModelCatalogue()),
  );
  let manifestName = options.agent;
  const directiveName = options.directive;
  let provider = options.provider;
  let settings: ProviderSettings | undefined;
  let demoReason: string | undefined;
  if (!provider) {
    try {
      settings = resolveProviderSettings({}, options.env);
    } catch (error) {
      // Only the complete absence of configuration runs the demo: a typo must not.
      if (!(error instanceof ConfigError) || isProviderConfigured(options.env)) {
        throw error;
      }
      demoReason = `${firstSentence(error.message)}: running Spool's built-in demo agent on the scripted provider. Set ANTHROPIC_API_KEY or OPENAI_API_KEY, or OPENAI_BASE_URL alone for a local server (Ollama, vLLM, llama.cpp, LM Studio), to talk to a model.`;
      if (manifestName === undefined && directiveName === undefined) manifestName = "demo";
    }
  }
  if (manifestName === undefined && directiveName === undefined) manifestName = "assistant";
  const manifest = manifestName !== undefined ? space.manifest(manifestName) : undefined;
  // A directive is known by its item name (`data/process` for .ai/directives/data/process.md):
  // that is what the log records, so resume and replay find the same file.
  const directiveItem = directiveName ?? manifest!.directive;
  const directive = space.directive(directiveItem);

  let model: string;
  if (provider) {
    model = options.model ?? directive.model.id ?? options.env.SPOOL_MODEL ?? "scripted";
  } else if (settings && settings.name !== "scripted") {
    // The directive's tier picks the model, unless SPOOL_MODEL names one or the server is a
    // local or compatible one (whose models the config cannot know).
    const hosted = settings.flavour === undefined || settings.flavour === "openai";
    const tiered =
      options.env.SPOOL_MODEL === undefined && hosted
        ? modelFor(
            config,
            manifest?.model?.tier ?? directive.model.tier,
            settings.name,
            manifest?.model?.id ?? directive.model.id,
          )
        : undefined;
    model = tiered ?? settings.model;
    if (tiered && tiered !== settings.model) {
      settings = resolveProviderSettings({ provider: settings.name, model: tiered }, options.env);
    }
    provider = createProvider(settings, { catalogue });
  } else {
    // SPOOL_PROVIDER=scripted plays SPOOL_SCRIPT (a YAML or JSON script file), the demo otherwise.
    const path = options.env.SPOOL_SCRIPT ?? join(findBuiltinDir(), "scripts", "demo.yaml");
    const script = loadScript(path);
    const tokenMs = Number(options.env.SPOOL_SCRIPT_TOKEN_MS ?? 0);
    model = options.env.SPOOL_MODEL ?? script.model ?? "scripted-demo";
    provider = createScriptedProvider({
      model,
      script: script.turns,
      loop: true,
      // A script has no window of its own: measured as a large hosted model's, said by no one.
      contextWindow: SCRIPTED_WINDOW,
      tokens: "word",
      ...(Number.isFinite(tokenMs) && tokenMs > 0 ? { timing: { tokenMs } } : {}),
    });
  }

  // Tiers resolve for the provider in use (replay's provider carries the name the log
  // recorded), so a summarizer or child agent gets the model it had: never a default provider's.
  const tierProvider: ProviderName = isProviderName(provider.name) ? provider.name : "anthropic";
  // A manifest's `inputs` are defaults of its directive's: what the run gives goes over them.
  const inputs = options.inputs
    ? checkInputs(directive, { ...manifest?.inputs, ...options.inputs })
    : undefined;
  const continuation = space.coordination().continuation;
  const directiveMeta = (name: string): { name: string; summarizer?: string } => {
    try {
      const found = space.directive(name);
      return { name, ...(found.summarizer ? { summarizer: found.summarizer } : {}) };
    } catch {
      return { name };
    }
  };
  const browser = manifest ? browserOf(manifest, options) : undefined;
  const watch = manifest ? agentWatch(manifest) : undefined;
  const mcp = options.mcp
    ? agentMcp(
        options.mcp,
        (relic, method, parameters, call) => host.call(relic, method, parameters, call),
        manifest,
      )
    : undefined;
  const tools = [
    ...toolsFor(options.workspace, directive, manifest, config),
    // MCP tools the directive's <permissions> grant (the manifest's mcp: chose the servers).
    ...(mcp?.tools.filter((tool) => permits(directive.permissions, "tool", tool.name)) ?? []),
    // memory.search, when there is an index and the directive's <permissions> grant it.
    ...(options.memoryIndex && permits(directive.permissions, "tool", "memory.search")
      ? [memorySearchTool({ index: options.memoryIndex, continuity: options.continuity })]
      : []),
    // The relic host is made below; the tools reach it only when they run.
    ...(browser?.tools((method, parameters, call) =>
      host.call("browser", method, parameters, call),
    ) ?? []),
  ];
  const sources = manifest
    ? agentSources({
        manifest,
        workspace: options.workspace,
        tools,
        adapters: options.sourceAdapters ?? DEFAULT_SOURCE_ADAPTERS,
        env: options.env,
        manifestFile: displayPath(manifest.source.path, options.workspace),
        ...(browser?.sourceEntry
          ? { browser: { entry: browser.sourceEntry, adapter: browser.adapter } }
          : {}),
      })
    : undefined;
  const limits = runLimits(effectiveLimits(directive.limits, manifest?.limits));
  const host: RelicHost = createRelicHost({
    store: options.store,
    continuity: options.continuity,
    relics: [
      createKvRelic(),
      ...(browser ? [browser.relic] : []),
      ...(mcp?.relics ?? []),
      ...config.relics.map((relic) =>
        createHttpRelic({
          name: relic.id,
          baseUrl: relic.baseUrl,
          allowedHosts: relic.allowedHosts,
          headers: relic.headers,
        }),
      ),
    ],
  });
  const workflows = workflowDirectory(join(options.workspace, ".ai", "workflows"));
  const capabilities = { space, relics: host, workflows: () => workflows.names() };
  const specOf = (target: Directive, item: string, own?: AgentManifest): AgentSpec => {
    const allowed = own === manifest ? tools : toolsFor(options.workspace, target, own, config);
    const names = new Set(allowed.map((tool) => tool.name));
    return {
      directive: item,
      instructions: withInputs(target, target === directive ? inputs : undefined),
      ...(target === directive && inputs && Object.keys(inputs).length > 0 ? { inputs } : {}),
      model:
        target === directive
          ? model
          : (modelFor(config, target.model.tier, tierProvider, target.model.id) ?? model),
      limits: target === directive ? limits : runLimits(target.limits),
      // Internal actions answer to the manifest's internal_actions policy, not to permissions.
      permits: (type, name) =>
        type === "internal" ||
        (permits(target.permissions, type, name) && (type !== "tool" || names.has(name))),
      tools: allowed,
      toolsText: formatToolCatalogue(allowed),
      capabilitiesText: describeCapabilities(target, item, { ...capabilities, shadowed: names }),
    };
  };
  const agent = {
    ...specOf(directive, directiveItem, manifest),
    ...(manifest ? { manifest: manifest.name } : {}),
  };

  return {
    options: {
      provider,
      agent,
      catalogue,
      modelWindows: {
        ...(envWindow !== undefined ? { envWindow } : {}),
        configured: config.modelInfo,
      },
      ...(manifest ? { internalActionsPolicy: manifest.feeds.internalActions } : {}),
      ...(browser ? { screenshotsInContext: browser.options.screenshotsInContext } : {}),
      // Every source reads through the action path (logged, permission-checked); without a
      // manifest the agent starts with no feeds and may add its own (every internal action allowed).
      feeds: { manifest: manifest?.feeds ?? parseFeedManifest({}), env: options.env },
      // What a `memory` context feed searches (`source: { type: internal, action: memory }`).
      ...(options.memoryIndex ? { memoryIndex: options.memoryIndex } : {}),
      ...(sources ? { sources } : {}),
      hooks: loadHooks({ space }).hooks,
      continuation,
      // A browser agent's own directive, when nothing more specific names a summarizer, is
      // summarized by browser_summarizer (the state of the page, not the work done).
      summarizerFor: (name) =>
        selectSummarizer({
          directive: directiveMeta(name),
          continuation,
          exists: (candidate) => space.locate("directive", candidate) !== undefined,
          ...(browser && name === directiveItem ? { agentDefault: BROWSER_SUMMARIZER } : {}),
          // An agent that watches frames hands off a description of the screen, never images.
          ...(!browser && watch && name === directiveItem
            ? { agentDefault: IMAGE_SUMMARIZER }
            : {}),
        }),
      summarizerSpec: (name) => {
        try {
          const target = space.directive(name);
          const spec = specOf(target, name);
          // coordination.yaml's summary_model picks the tier, unless the directive names a model.
          const tiered = target.model.id
            ? undefined
            : modelFor(config, continuation.summaryModel, tierProvider);
          return tiered ? { ...spec, model: tiered } : spec;
        } catch {
          return undefined;
        }
      },
      agents: {
        get: (name) => {
          try {
            return specOf(space.directive(name), name);
          } catch {
            return undefined;
          }
        },
        names: () =>
          space
            .list({ kind: "directive" })
            .filter((item) => item.active)
            .map((item) => item.name),
      },
      executors: [createRelicExecutor(host)],
      stepExecutors: (scope) => [
        createWorkflowExecutor({
          store: options.store,
          continuity: options.continuity,
          step: scope.step,
          loadWorkflow: (name) => workflows.load(name),
          names: () => workflows.names(),
          // Each step's action takes the runtime's action path: intent, gate, serial, replay.
          run: (call) => scope.runAction(call),
          timeouts: "run",
        }),
      ],
    },
    directive,
    providerName: provider.name,
    model,
    demo: demoReason !== undefined && options.provider === undefined,
    ...(demoReason !== undefined && options.provider === undefined ? { demoReason } : {}),
    space,
    ...(watch ? { watch } : {}),
    ...(browser ? { browser: browser.relic } : {}),
    close: () => host.close(),
  };
}

/**
 * The browser of a manifest with a `browser:` section; a bad section is the manifest's
 * `ConfigError`, each issue at its line.
 */
function browserOf(manifest: AgentManifest, options: AssembleOptions): AgentBrowser | undefined {
  try {
    return agentBrowser({
      section: manifest.browser,
      workspace: options.workspace,
      env: options.env,
    });
  } catch (error) {
    if (!(error instanceof ConfigError) || error.code !== "config.browser") throw error;
    const issues = Array.isArray(error.details.issues) ? error.details.issues : [];
    throw manifest.sources.issues(
      issues.map((issue: { path?: unknown; message?: unknown }) => ({
        path: String(issue.path ?? "browser"),
        message: String(issue.message),
      })),
    );
  }
}

/** The window the scripted provider (the demo, `SPOOL_PROVIDER=scripted`) says it has. */
const SCRIPTED_WINDOW = 200_000;

/** The built-in tools `directive` permits and the manifest (or config) enables, configured. */
function toolsFor(
  workspace: string,
  directive: Directive,
  manifest: AgentManifest | undefined,
  config: ReturnType<ItemSpace["config"]>,
): AnyTool[] {
  const access = new Map(
    BUILTIN_TOOL_NAMES.map((name) => [
      name,
      resolveToolAccess(name, { directive, ...(manifest ? { manifest } : {}), config }),
    ]),
  );
  const http = access.get("http.fetch");
  const shell = access.get("shell.run");
  const allowHosts =
    http?.allowed && Array.isArray(http.options.allow_hosts)
      ? (http.options.allow_hosts as unknown[]).filter(
          (host): host is string => typeof host === "string",
        )
      : [];
  const all = builtinTools({
    workspace,
    http: { allowHosts },
    shell: { enabled: shell?.allowed === true },
  });
  return all.filter(
    (tool) => access.get(tool.name as (typeof BUILTIN_TOOL_NAMES)[number])?.allowed === true,
  );
}

function runLimits(limits: ReturnType<typeof effectiveLimits>): RunLimits {
  return {
    ...(limits.maxTurns !== undefined ? { maxTurns: limits.maxTurns } : {}),
    ...(limits.maxTokens !== undefined ? { maxTokens: limits.maxTokens } : {}),
    ...(limits.maxSpendUsd !== undefined ? { maxSpendUsd: limits.maxSpendUsd } : {}),
    ...(limits.maxWallSeconds !== undefined ? { maxWallMs: limits.maxWallSeconds * 1000 } : {}),
    ...(limits.maxSpawnDepth !== undefined ? { maxSpawnDepth: limits.maxSpawnDepth } : {}),
  };
}

/**
 * The directive's instructions with its inputs filled in (`fillInputs`: `$name` replaced by the
 * value, inputs the text does not mention listed after it): the typed inputs of the run when
 * given, else the declared defaults.
 */
function withInputs(directive: Directive, given: Record<string, unknown> | undefined): string {
  const values: Record<string, unknown> = {};
  for (const input of directive.inputs) {
    const value = given?.[input.name] ?? input.default;
    if (value !== undefined) values[input.name] = value;
  }
  return fillInputs(directive.body, values);
}

function firstSentence(text: string): string {
  const end = text.search(/[.;]\s/);
  return (end === -1 ? text : text.slice(0, end)).trim();
}

import type { EventStore } from "../../src/log/index.js";
import { createScriptedProvider, type ScriptedTurn } from "../../src/providers/index.js";
import { createModelCatalogue, type ModelCatalogue } from "../../src/providers/models/index.js";
import type { Provider, ProviderRequest } from "../../src/providers/provider.js";
import {
  type AgentRuntime,
  type AgentRuntimeOptions,
  type AgentSpec,
  createAgentRuntime,
} from "../../src/runtime/index.js";

/** A model with an 8k window (and a small output reserve), as the long-run proofs use. */
export const SMALL_MODEL = "tiny-8k";

/** The catalogue with `SMALL_MODEL` in it. */
export function smallCatalogue(window = 8192, maxOutput = 512): ModelCatalogue {
  return createModelCatalogue({
    [SMALL_MODEL]: {
      provider: "anthropic",
      format: "anthropic",
      contextWindow: window,
      maxOutputTokens: maxOutput,
      pricing: { inputPerMTok: 1, outputPerMTok: 5 },
    },
  });
}

/** The system prompt marker of the summarizer directive below. */
export const SUMMARIZER_MARK = "You write the handoff summary";

/** The foreground agent of the proofs. */
export function longRunAgent(overrides: Partial<AgentSpec> = {}): AgentSpec {
  return {
    directive: "keeper",
    instructions: "Answer every message briefly. Keep track of what the user told you.",
    model: SMALL_MODEL,
    limits: {},
    permits: () => true,
    tools: [],
    ...overrides,
  };
}

/** A summarizer directive as the item space would give it (thread_summary's interface). */
export function summarizerSpec(name = "thread_summary"): AgentSpec {
  return {
    directive: name,
    instructions: `${SUMMARIZER_MARK} of a thread that ran $directive_name, in at most $max_summary_tokens tokens.\n\n$transcript_content`,
    model: SMALL_MODEL,
    limits: { maxTurns: 2 },
    permits: () => true,
    tools: [],
    nativeTools: false,
  };
}

/**
 * One provider for the foreground and the summarizer: requests whose system prompt is the
 * summarizer's go to `summarizer`, every other one to `foreground`. Both are real scripted
 * providers; the router only picks between them.
 */
export function routedProvider(
  foreground: Provider,
  summarizer: Provider,
  inspect?: (request: ProviderRequest, summary: boolean) => void,
): Provider {
  return {
    name: "scripted",
    format: "scripted",
    stream: (request, options) => {
      const summary = request.system?.includes(SUMMARIZER_MARK) === true;
      inspect?.(request, summary);
      return (summary ? summarizer : foreground).stream(request, options);
    },
  };
}

/**
 * A provider whose every answer `answer` builds from the request it is sent (it may wait first),
 * played as one scripted turn.
 */
export function answeringProvider(
  answer: (request: ProviderRequest) => ScriptedTurn | Promise<ScriptedTurn>,
  model = SMALL_MODEL,
): Provider {
  return {
    name: "scripted",
    format: "scripted",
    async *stream(request, options) {
      const turn = await answer(request);
      yield* createScriptedProvider({ model, script: [turn] }).stream(request, options);
    },
  };
}

/** A scripted summarizer that answers every call with a structured summary. */
export function scriptedSummarizer(turns?: readonly ScriptedTurn[]) {
  return createScriptedProvider({
    model: SMALL_MODEL,
    loop: true,
    script: turns ?? [
      "<response>## Completed Work\nAnswered the user's messages.\n\n## Pending Work\nNone.\n\n## Key Decisions & Context\nThe user's facts are pinned.\n\n## Tool Results\nNone.\n\n## Next\nAnswer the next message.</response>",
    ],
  });
}

/** A runtime over `store` with the proofs' agent, catalogue and summarizer. */
export function longRunRuntime(
  store: EventStore,
  provider: Provider,
  overrides: Partial<AgentRuntimeOptions> = {},
): AgentRuntime {
  const summarizer = summarizerSpec();
  return createAgentRuntime({
    store,
    provider,
    agent: longRunAgent(),
    catalogue: smallCatalogue(),
    agents: {
      get: (name) => (name === summarizer.directive ? summarizer : undefined),
      names: () => [summarizer.directive],
    },
    sleep: async () => {},
    ...overrides,
  });
}

/** A user message of about `words` words, numbered, so each turn is different. */
export function filler(turn: number, words = 120): string {
  const parts = [`Message ${turn}.`];
  for (let index = 0; parts.length < words; index++) {
    parts.push(`note-${turn}-${index}`);
  }
  return parts.join(" ");
}

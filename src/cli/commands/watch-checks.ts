import type { AssembledAgent } from "../../app/index.js";
import { displayPath } from "../../directives/index.js";
import type { EventStore } from "../../log/index.js";
import {
  openSourceDefinition,
  readSourcesState,
  SourceAccessError,
  type SourceAccessPolicy,
  type SourceDefinition,
} from "../../sources/index.js";
import { ConfigError, errorCodeOf } from "../../spec/index.js";
import type { CommandContext } from "../context.js";

/** The agent `spool watch` runs when none is named: the built-in log monitor. */
export const DEFAULT_WATCH_AGENT = "log_monitor";

/**
 * The sources the watch reads: the manifest's, or (for an agent that lets the model add its
 * own) those the continuity's log has; none for an agent that watches frames (`watch:` with a
 * source) and has no other source. None at all: a `ConfigError` (exit 2) naming the manifest
 * section to add, with an example.
 */
export async function watchedSources(
  ctx: CommandContext,
  store: EventStore,
  continuity: string,
  assembled: AssembledAgent,
  agent: string,
): Promise<SourceDefinition[]> {
  const config = assembled.options.sources;
  const declared = config?.manifest.definitions ?? [];
  if (config && declared.length > 0) {
    return checkOpenings(declared, config.access, config.env ?? {}, agent);
  }
  if (config && (await store.continuity(continuity))) {
    const state = await readSourcesState(store, continuity);
    const known = [...state.sources.values()].filter((source) => source.status !== "removed");
    const definitions = known.flatMap((source) => (source.definition ? [source.definition] : []));
    if (definitions.length > 0) return definitions;
  }
  // A screen or camera watch (`watch: { source }`) is something to watch without any source.
  if (assembled.watch?.source) return [];
  const found = assembled.space.locate("agent", agent);
  const file = found ? displayPath(found.path, ctx.io.cwd) : `.ai/agents/${agent}.yaml`;
  const where =
    found?.tier === "builtin"
      ? `copy ${file} to .ai/agents/${agent}.yaml and add a sources: section there`
      : `add a sources: section to ${file}`;
  throw new ConfigError(
    "config.no-sources",
    `agent "${agent}" declares no sources, so there is nothing to watch`,
    {
      hint: `To watch a log, ${where}, e.g.\n\nsources:\n  - id: app-log\n    kind: file\n    target: logs/app.log\n    patterns:\n      error: "ERROR|FATAL"\n\n(docs/sources.md has every kind), or run \`spool watch\` without --agent for the built-in ${DEFAULT_WATCH_AGENT}`,
    },
  );
}

/**
 * The declared sources, once each opens as the runtime will open it (`openSourceDefinition`:
 * its `${NAME}`s set, its target readable): a command without `shell.run`, a path outside the
 * workspace, a host not allowed, an unset variable is a `ConfigError` (exit 2) listing each with
 * its fix, before anything starts.
 */
function checkOpenings(
  definitions: SourceDefinition[],
  access: SourceAccessPolicy,
  env: Readonly<Record<string, string | undefined>>,
  agent: string,
): SourceDefinition[] {
  const problems: string[] = [];
  for (const definition of definitions) {
    try {
      openSourceDefinition(definition, access, env);
    } catch (error) {
      if (
        !(error instanceof SourceAccessError) &&
        errorCodeOf(error, "") !== "source.missing-env"
      ) {
        throw error;
      }
      problems.push(`- ${(error as Error).message}`);
    }
  }
  if (problems.length === 0) return definitions;
  throw new ConfigError(
    "config.source-denied",
    `agent "${agent}" has sources that may not read their targets:\n${problems.join("\n")}`,
  );
}

/** The refusal when no provider is configured (the demo would run): exit 2, how to set one. */
export function noModelError(): ConfigError {
  return new ConfigError(
    "config.no-provider",
    "spool watch needs a model, and no model provider is configured",
    {
      hint: "Set ANTHROPIC_API_KEY or OPENAI_API_KEY, or OPENAI_BASE_URL alone for a local server (Ollama, vLLM, llama.cpp, LM Studio; docs/providers.md), then run it again",
    },
  );
}

/** Says which process runs `continuity` and how to follow it; the exit code, 1. */
export function runElsewhere(ctx: CommandContext, continuity: string, holder: string): number {
  ctx.err(
    `spool: another process (${holder}) is watching continuity ${continuity}; follow it with \`spool tail ${continuity}\`, or stop it first`,
  );
  return 1;
}

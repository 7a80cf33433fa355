import { z } from "zod";
import { type AnyInternalAction, defineInternalAction } from "../actions/index.js";
import {
  checkSourceAccess,
  checkSourceEntry,
  type recallSourceLines,
  type SourceAccessPolicy,
  type SourceDefinition,
  type SourceManifest,
} from "../sources/index.js";
import { identifier, SpoolError } from "../spec/index.js";
import type { SourceFold } from "./source-fold.js";

/**
 * What the source actions change, carried out by the session's sources (`SessionSources`): each
 * logs its change on the source's stream (`by: "action"`, `action_id`) and, in a live runtime,
 * starts or stops the source's runner. Replay logs the same change and runs nothing.
 */
export interface SourceControl {
  /** The fold, caught up with the log. */
  current(): Promise<SourceFold>;
  add(definition: SourceDefinition, actionId: string): Promise<void>;
  pause(id: string, actionId: string, reason: string | undefined): Promise<void>;
  resume(id: string, actionId: string): Promise<void>;
  remove(id: string, actionId: string): Promise<void>;
  /** The store and continuity `source.recall` reads. */
  recall: (query: RecallQuery) => ReturnType<typeof recallSourceLines>;
}

/** What `source.recall` asks for. */
export type RecallQuery = Parameters<typeof recallSourceLines>[2];

/** What source actions answer to: the manifest (its `source_actions`) and the access policy. */
export interface SourceActionsConfig {
  manifest: SourceManifest;
  access: SourceAccessPolicy;
  /** The manifest file, as messages name it (`.ai/agents/watcher.yaml`); default "the agent manifest". */
  manifestFile?: string;
}

// Sources are named `source` in every action, as the digests' recall line writes it.
const byId = z.strictObject({ source: identifier });
const pauseParameters = z.strictObject({
  source: identifier,
  reason: z.string().max(1_000).optional(),
});
const recallParameters = z.strictObject({
  source: identifier,
  from_chunk: z.number().int().min(1),
  to_chunk: z.number().int().min(1),
  max_lines: z.number().int().min(1).max(10_000).optional(),
  max_bytes: z.number().int().min(256).max(1_000_000).optional(),
});
const addParameters = z.record(z.string(), z.unknown());

/**
 * Whether the agent gets source actions at all: when its manifest declares sources or enables
 * `source_actions`.
 */
export function offersSourceActions(config: SourceActionsConfig): boolean {
  return config.manifest.definitions.length > 0 || config.manifest.actions.enabled;
}

/**
 * The source actions of the agent (none unless `offersSourceActions`): `source.pause`,
 * `source.resume`, `source.remove` and `source.recall` (the lines of delivered chunks, at most
 * those delivered, so a replay reads what the original read), and `source.add` when
 * `source_actions.enabled`: a definition whose kind `source_actions.kinds` allows and whose
 * target the access policy admits; a denial fails the action with the manifest line that
 * would allow it. Every decision depends only on what the log says of the sources before the
 * action (who added, paused, resumed or removed them), never on what a runner read meanwhile.
 */
export function sourceActions(
  config: SourceActionsConfig,
  control: SourceControl,
): AnyInternalAction[] {
  if (!offersSourceActions(config)) return [];
  const known = async (id: string) => {
    const state = (await control.current()).source(id);
    if (!state || state.status === "removed") {
      throw new SpoolError(
        "source.unknown",
        `there is no source "${id}"${state ? " any more: it was removed" : ""}; the sources delivered to you name their ids (source:<id>)`,
      );
    }
    return state;
  };
  const actions: AnyInternalAction[] = [
    defineInternalAction({
      name: "source.pause",
      description: 'Stops a source reading for now ({"source", "reason"?}); its cursor stays.',
      parameters: pauseParameters,
      async run(parameters, context) {
        await known(parameters.source);
        await control.pause(parameters.source, context.actionId, parameters.reason);
        return { source: parameters.source, status: "paused" };
      },
    }),
    defineInternalAction({
      name: "source.resume",
      description: 'Reads a paused or failed source again from its cursor ({"source"}).',
      parameters: byId,
      async run(parameters, context) {
        await known(parameters.source);
        await control.resume(parameters.source, context.actionId);
        return { source: parameters.source, status: "resumed" };
      },
    }),
    defineInternalAction({
      name: "source.remove",
      description: 'Stops a source for good ({"source"}); what it read stays recallable.',
      parameters: byId,
      async run(parameters, context) {
        await known(parameters.source);
        await control.remove(parameters.source, context.actionId);
        return { source: parameters.source, status: "removed" };
      },
    }),
    defineInternalAction({
      name: "source.recall",
      description:
        'The lines of delivered chunks of a source ({"source", "from_chunk", "to_chunk", "max_lines"?, "max_bytes"?}).',
      parameters: recallParameters,
      async run(parameters) {
        const id = parameters.source;
        const state = (await control.current()).source(id);
        if (!state) {
          throw new SpoolError("source.unknown", `there is no source "${id}"`);
        }
        const delivered = state.delivered;
        if (parameters.from_chunk > delivered || parameters.from_chunk > parameters.to_chunk) {
          throw new SpoolError(
            "source.not-delivered",
            `source "${id}" has delivered chunks 1 to ${delivered}; ask for from_chunk ≤ to_chunk within them (from_chunk ${parameters.from_chunk}, to_chunk ${parameters.to_chunk})`,
          );
        }
        return control.recall({
          source: id,
          from_chunk: parameters.from_chunk,
          to_chunk: Math.min(parameters.to_chunk, delivered),
          ...(parameters.max_lines !== undefined ? { max_lines: parameters.max_lines } : {}),
          ...(parameters.max_bytes !== undefined ? { max_bytes: parameters.max_bytes } : {}),
        });
      },
    }),
  ];
  if (config.manifest.actions.enabled) actions.unshift(addAction(config, control));
  return actions;
}

/**
 * The system prompt's account of the agent's sources and their actions (empty when it has
 * none): the manifest's sources and what the model may do. Depends on the manifest alone, so a
 * replay builds the same prompt.
 */
export function describeSources(config: SourceActionsConfig): string {
  if (!offersSourceActions(config)) return "";
  const { definitions, actions } = config.manifest;
  const lines = [
    'Sources read continuous inputs for you. What they read comes to you as a turn from "source:<id>" (or "sources", for several at once) holding a digest of the chunks it covers; chunks are numbered per source from 1. Manage them with internal actions (type "internal"):',
    '- "source.recall" {"source", "from_chunk", "to_chunk", "max_lines"?}: the lines of chunks already delivered, when a digest left out what you need.',
    '- "source.pause" {"source", "reason"?} and "source.resume" {"source"}: stop reading for now, and read on from where it stopped (also after a failure).',
    '- "source.remove" {"source"}: stop a source for good.',
  ];
  if (actions.enabled) {
    lines.push(
      `- "source.add" {"id", "kind", "target", "include"?, "exclude"?, "patterns"?}: a new source, of kind ${actions.kinds.join(", ") || "(none)"}; "patterns" names regular expressions whose matching lines each digest counts.`,
    );
  }
  if (definitions.length > 0) {
    lines.push(
      `Declared sources: ${definitions.map((definition) => `${definition.id} (${definition.kind} ${definition.target})`).join(", ")}.`,
    );
  }
  return lines.join("\n");
}

function addAction(config: SourceActionsConfig, control: SourceControl): AnyInternalAction {
  const file = config.manifestFile ?? "the agent manifest";
  const policy = config.manifest.actions;
  return defineInternalAction({
    name: "source.add",
    description:
      'Adds a source: {"id", "kind", "target", "include"?, "exclude"?, "patterns"?, "batch"?, "mode"?, "options"?}.',
    parameters: addParameters,
    async run(parameters, context) {
      const checked = checkSourceEntry(parameters);
      if (!checked.definition) {
        const issues = checked.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
        throw new SpoolError(
          "source.bad-definition",
          `the source is not valid: ${issues.join("; ")}`,
        );
      }
      const definition = checked.definition;
      if (!policy.kinds.includes(definition.kind)) {
        throw new SpoolError(
          "source.denied",
          `this agent may not add ${definition.kind} sources (it may add: ${policy.kinds.join(", ") || "none"}); to allow it, add ${definition.kind} to source_actions.kinds in ${file}`,
        );
      }
      const existing = (await control.current()).source(definition.id);
      if (existing && existing.status !== "removed") {
        throw new SpoolError(
          "source.exists",
          `there is a source "${definition.id}" already; pick another id, or remove it first (source.remove)`,
        );
      }
      try {
        checkSourceAccess(definition, config.access);
      } catch (error) {
        throw new SpoolError(
          errorCode(error),
          `${errorText(error)}. To allow it, ${allowLine(definition)} in ${file}`,
        );
      }
      await control.add(definition, context.actionId);
      return { source: definition.id, status: "added" };
    },
  });
}

/** The manifest line that would admit `definition`'s target. */
function allowLine(definition: SourceDefinition): string {
  if (definition.kind === "command") return "give the agent shell.run (tools: [shell.run])";
  if (definition.kind === "file" || definition.kind === "dataset") {
    return `add source_actions: { allow_paths: [${JSON.stringify(definition.target)}] }`;
  }
  let host = definition.target;
  try {
    host = new URL(definition.target).host;
  } catch {
    // The definition's check refused targets that are no URL; the message names it as written.
  }
  return `add source_actions: { allow_hosts: [${JSON.stringify(host)}] }`;
}

function errorCode(error: unknown): string {
  return error instanceof SpoolError ? error.code : "source.denied";
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.replace(/[.\s]+$/, "");
}

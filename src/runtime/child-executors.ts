import { z } from "zod";
import type { ActionCall, ActionRefusal, CheckedActionExecutor } from "../actions/index.js";
import type { Provider } from "../providers/index.js";
import { MessageAssembler, messageText } from "../providers/index.js";
import { SpoolError } from "../spec/index.js";

/** Runs a directive as a child thread and resolves with its final response. */
export type SpawnChild = (call: ActionCall) => Promise<string>;

/**
 * The executor of `agent` actions: the action's `name` is a directive, its parameters the task.
 * `spawn` runs the child thread (logged, linked to its parent, depth-limited) and resolves with
 * its final response, which becomes the action's output.
 */
export function createAgentExecutor(options: {
  has(name: string): boolean;
  names(): readonly string[];
  spawn: SpawnChild;
}): CheckedActionExecutor {
  return {
    type: "agent",
    canRun: (name) => options.has(name),
    names: () => options.names(),
    execute: (call) => options.spawn(call),
  };
}

const llmParameters = z.strictObject({
  prompt: z.string().min(1, "must not be empty").max(200_000),
  system: z.string().max(50_000).optional(),
  max_tokens: z.number().int().positive().max(64_000).optional(),
});

/**
 * The executor of `llm` actions: a one-shot model call on the fast tier. The action's `name` is
 * a label of the task (`summarize`, `classify`, …); parameters are `prompt`, optional `system`
 * and `max_tokens`. Resolves with the model's text; a provider failure rejects with its typed
 * error (retryable when the provider said so).
 */
export function createLlmExecutor(options: {
  provider: Provider;
  model: string;
}): CheckedActionExecutor {
  return {
    type: "llm",
    check(_name, parameters): ActionRefusal | undefined {
      const parsed = llmParameters.safeParse(parameters);
      if (parsed.success) return undefined;
      return {
        reason: "bad-parameters",
        message: `llm actions take {"prompt": "…", "system"?: "…", "max_tokens"?: n}: ${parsed.error.issues
          .map((issue) => `${issue.path.join(".") || "parameters"} ${issue.message}`)
          .join("; ")}`,
      };
    },
    async execute(call) {
      const parameters = llmParameters.parse(call.parameters);
      const assembler = new MessageAssembler(options.provider.format);
      const parts = options.provider.stream(
        {
          model: options.model,
          ...(parameters.system !== undefined ? { system: parameters.system } : {}),
          messages: [{ role: "user", content: parameters.prompt }],
          ...(parameters.max_tokens !== undefined
            ? { maxOutputTokens: parameters.max_tokens }
            : {}),
        },
        { signal: call.signal },
      );
      for await (const part of parts) assembler.push(part);
      const message = assembler.message();
      if (message.error) {
        throw new SpoolError(message.error.code, message.error.message, {
          retryable: message.error.retryable,
        });
      }
      return messageText(message);
    },
  };
}

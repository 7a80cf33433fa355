/**
 * The OpenTelemetry attribute names Spool's spans carry: the GenAI semantic conventions (as
 * `@opentelemetry/semantic-conventions/incubating` spells them; a test holds the two equal) and
 * Spool's own `spool.*` names. Copied rather than imported, as the conventions advise for
 * incubating names, and so that folding the log loads no OpenTelemetry package.
 */
export const ATTR = {
  operationName: "gen_ai.operation.name",
  providerName: "gen_ai.provider.name",
  conversationId: "gen_ai.conversation.id",
  agentName: "gen_ai.agent.name",
  agentId: "gen_ai.agent.id",
  requestModel: "gen_ai.request.model",
  responseModel: "gen_ai.response.model",
  responseId: "gen_ai.response.id",
  finishReasons: "gen_ai.response.finish_reasons",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadTokens: "gen_ai.usage.cache_read.input_tokens",
  cacheCreationTokens: "gen_ai.usage.cache_creation.input_tokens",
  reasoningTokens: "gen_ai.usage.reasoning.output_tokens",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  toolCallArguments: "gen_ai.tool.call.arguments",
  toolCallResult: "gen_ai.tool.call.result",
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  errorType: "error.type",
  threadId: "spool.thread.id",
  turnId: "spool.turn.id",
  stepId: "spool.step.id",
  runStatus: "spool.run.status",
  runResumed: "spool.run.resumed",
  runSteps: "spool.run.steps",
  costUsd: "spool.cost_usd",
  actionType: "spool.action.type",
  actionMode: "spool.action.mode",
  actionAttempts: "spool.action.attempts",
  contextTokens: "spool.context.tokens",
  contextMessages: "spool.context.messages",
  contextOmitted: "spool.context.omitted",
  handoffFrom: "spool.handoff.from",
  handoffContinuation: "spool.handoff.continuation",
  handoffReason: "spool.handoff.reason",
  handoffMode: "spool.handoff.mode",
  handoffPressure: "spool.handoff.pressure_ratio",
  handoffTokensBefore: "spool.handoff.tokens_before",
  handoffTokensAfter: "spool.handoff.tokens_after",
} as const;

/** The `gen_ai.operation.name` values Spool's spans use. */
export const OPERATION = {
  invokeAgent: "invoke_agent",
  chat: "chat",
  executeTool: "execute_tool",
} as const;

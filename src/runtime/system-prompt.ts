/** What the system prompt of a thread is made of. */
export interface SystemPromptParts {
  /** The directive's name and its instructions (the markdown body). */
  directive: string;
  instructions: string;
  /** The tools the agent may call, described for the model (see `describeTools`). */
  tools: string;
  /** Other action kinds the agent may use (`agent`, `llm`, `relic`, `workflow`), described. */
  capabilities?: string;
  /** The agent's sources and the internal actions that manage them, described. */
  sources?: string;
}

/**
 * How to talk to Spool, for the model: the tags, the action body, modes, dependencies,
 * `$variables` and how results come back. Kept short: it is in every call.
 */
export const PROTOCOL_GUIDE = `# How to act
Write your reasoning in <thought>…</thought>, your answer to the user in <response>…</response>, and
ask for work with actions. An action runs the moment its closing tag arrives, while you go on writing:

<action type="tool" mode="async" id="a1">{"name": "fs.read", "parameters": {"path": "README.md"}, "output_key": "readme"}</action>

- type: tool | agent | llm | relic | workflow | internal. id: unique in this output.
- mode: sync (your later output waits for it), async (runs in the background), fire_and_forget.
- Body: one JSON object with "name" and "parameters"; optional "output_key" (stores the result as
  $name), "depends_on" (ids that must succeed first), "timeout" (seconds), "retry", "on_error"
  (fail | skip | retry).
- "$name" in parameters or in a response is replaced by a stored result ($name.field for a part).
- <response final="false">…</response> shows progress and lets you continue after the results;
  <response> (final) ends your turn once your actions are done. Results you did not wait for come
  back to you in the next message inside <action_results>; fix anything listed in <protocol_errors>.
- Only ask for tools you are allowed; a refused action comes back with the reason.
- Memory (type internal): "pin" {"text", "kind": "fact"|"rule"} keeps something in every later
  context; "recall" {"summary": id} reads back what a handoff summary covers.`;

/**
 * The system prompt of a thread: the directive's instructions, the protocol guide, and the tools
 * and capabilities it may use. Deterministic (replay compares prompts through their digest).
 */
export function buildSystemPrompt(parts: SystemPromptParts): string {
  const sections = [
    `You are running the directive "${parts.directive}".`,
    parts.instructions.trim(),
    PROTOCOL_GUIDE,
    parts.tools.trim() === ""
      ? "# Tools\nNo tools are available."
      : `# Tools\n${parts.tools.trim()}`,
  ];
  if (parts.capabilities && parts.capabilities.trim() !== "") {
    sections.push(`# Other actions\n${parts.capabilities.trim()}`);
  }
  if (parts.sources && parts.sources.trim() !== "") {
    sections.push(`# Sources\n${parts.sources.trim()}`);
  }
  return sections.filter((section) => section !== "").join("\n\n");
}

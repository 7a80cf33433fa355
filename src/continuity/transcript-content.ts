import type { ContentBlock, ProviderMessage, ToolResult, UserPart } from "../providers/index.js";

/** Options of `renderTranscript`. */
export interface RenderTranscriptOptions {
  /**
   * The most characters (UTF-16 code units) the text may have. When the whole transcript is
   * longer, the oldest messages are left out (and, if even the newest message is too long, the
   * start of it), and a note at the top says how many. Default: no limit.
   */
  maxChars?: number;
}

/**
 * The inputs of a summarizer directive: the one interface every summarizer takes (the built-in
 * `thread_summary` declares exactly these).
 */
export type SummarizerInputs = {
  /** The thread as text (`renderTranscript`). */
  transcript_content: string;
  /** The directive the summarized thread ran. */
  directive_name: string;
  /** Tokens the summary may take. */
  max_summary_tokens: number;
  /**
   * Where each source the transcript's delivery turns cover stands (`renderSourcesInput`): its
   * mode, chunk range and the cursor after it. Absent when the transcript holds no delivery.
   */
  sources?: string;
};

/** The headings of the three message roles. */
const HEADINGS: Readonly<Record<ProviderMessage["role"], string>> = {
  user: "### User",
  assistant: "### Assistant",
  tool: "### Tool results",
};

const SEPARATOR = "\n\n";

/** One rendered message: its heading and its text. */
interface Section {
  heading: string;
  body: string;
}

/**
 * The text a summarizer reads as `transcript_content`: each message under a `### User`,
 * `### Assistant` or `### Tool results` heading, blank lines between. Text is verbatim; a tool
 * call is `[tool call <name>(<id>): <json arguments>]`, a tool result `[result of <id>: <output>]`
 * (`[result of <id> (error): …]` when it failed), an image `[image]` (a user's, or one a tool
 * result returned, right after that result), a refusal `[refusal: <text>]`, another provider
 * block `[provider block <kind>]`. Reasoning (thinking, redacted or not) is left out, and so is a
 * message with nothing else to show.
 *
 * With `maxChars` the newest content is kept: whole messages, newest first, as many as fit under
 * a first line `[transcript shortened: N earlier messages left out]`; when not even the newest
 * message fits, its end is kept (`…` marks the cut). The result is then never longer than
 * `maxChars`. Deterministic and pure: the same messages give the same text.
 */
export function renderTranscript(
  messages: readonly ProviderMessage[],
  options: RenderTranscriptOptions = {},
): string {
  const sections = messages
    .map(renderMessage)
    .filter((section): section is Section => section !== undefined);
  if (sections.length === 0) return "";
  const texts = sections.map(sectionText);
  const whole = texts.join(SEPARATOR);
  const { maxChars } = options;
  if (maxChars === undefined || whole.length <= maxChars) return whole;

  // Newest first, whole messages, while they fit under the note for those left out.
  let kept = 0;
  let keptLength = 0;
  while (kept < texts.length) {
    const next = texts[texts.length - 1 - kept]!;
    const length = keptLength + (kept > 0 ? SEPARATOR.length : 0) + next.length;
    const note = shortenedNote(texts.length - kept - 1, false);
    if (note.length + SEPARATOR.length + length > maxChars) break;
    kept += 1;
    keptLength = length;
  }
  if (kept > 0) {
    const note = shortenedNote(texts.length - kept, false);
    return [note, ...texts.slice(texts.length - kept)].join(SEPARATOR);
  }

  // Not even the newest message fits: keep the end of it.
  const newest = sections[sections.length - 1]!;
  const note = shortenedNote(sections.length - 1, true);
  const head = `${note}${SEPARATOR}${newest.heading}${SEPARATOR}…`;
  const room = maxChars - head.length;
  if (room <= 0) return note.slice(0, Math.max(0, maxChars));
  return head + tail(newest.body, room);
}

/**
 * The inputs record of a summarizer run (`transcript_content`, `directive_name`,
 * `max_summary_tokens`, and `sources` when the transcript covers source deliveries) from the
 * rendered transcript. Pure.
 */
export function renderSummarizerInputs(options: {
  /** The thread as text, from `renderTranscript`. */
  transcript: string;
  /** The directive the summarized thread ran. */
  directiveName: string;
  /** Tokens the summary may take (`SummarizerChoice.maxSummaryTokens`). */
  maxSummaryTokens: number;
  /** The rendered source positions (`renderSourcesInput`); left out when empty. */
  sources?: string;
}): SummarizerInputs {
  return {
    transcript_content: options.transcript,
    directive_name: options.directiveName,
    max_summary_tokens: options.maxSummaryTokens,
    ...(options.sources ? { sources: options.sources } : {}),
  };
}

function renderMessage(message: ProviderMessage): Section | undefined {
  let parts: string[];
  switch (message.role) {
    case "user":
      parts =
        typeof message.content === "string"
          ? [message.content]
          : message.content.map(renderUserPart);
      break;
    case "assistant":
      parts =
        typeof message.content === "string"
          ? [message.content]
          : message.content.map(renderBlock).filter((part) => part !== undefined);
      break;
    case "tool":
      parts = message.results.flatMap(renderResult);
      break;
  }
  const body = parts.filter((part) => part !== "").join(SEPARATOR);
  return body === "" ? undefined : { heading: HEADINGS[message.role], body };
}

function renderUserPart(part: UserPart): string {
  return part.type === "text" ? part.text : "[image]";
}

function renderBlock(block: ContentBlock): string | undefined {
  switch (block.type) {
    case "text":
      return block.text;
    case "tool-call": {
      const args = block.input !== undefined ? JSON.stringify(block.input) : block.inputText;
      return `[tool call ${block.name}(${block.id}): ${args}]`;
    }
    case "refusal":
      return `[refusal: ${block.text}]`;
    case "provider":
      return `[provider block ${block.kind}]`;
    case "reasoning":
    case "redacted-reasoning":
      return undefined;
  }
}

/** A result, then `[image]` for each image it returned, as user images are rendered. */
function renderResult(result: ToolResult): string[] {
  const text = `[result of ${result.toolCallId}${result.isError ? " (error)" : ""}: ${result.output}]`;
  return [text, ...(result.images ?? []).map(() => "[image]")];
}

function sectionText(section: Section): string {
  return `${section.heading}${SEPARATOR}${section.body}`;
}

function shortenedNote(omitted: number, cut: boolean): string {
  const messages = `${omitted} earlier message${omitted === 1 ? "" : "s"}`;
  return cut
    ? `[transcript shortened: ${messages} and the start of the newest one left out]`
    : `[transcript shortened: ${messages} left out]`;
}

/** The last `length` code units of `text`, never starting inside a surrogate pair. */
function tail(text: string, length: number): string {
  const start = Math.max(0, text.length - length);
  const code = text.charCodeAt(start);
  return code >= 0xdc00 && code <= 0xdfff ? text.slice(start + 1) : text.slice(start);
}

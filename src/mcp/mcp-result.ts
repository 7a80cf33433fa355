import type { ArtifactStore } from "../log/index.js";

/** One part of a tool's result as Spool logs it: text inline, bytes as artifacts. */
export type McpContentPart = Record<string, unknown> & { type: string; text?: string };

/** A tool's (or a resource read's) result as Spool logs and shows it to the model. */
export interface McpCallResult {
  content: McpContentPart[];
  /** The tool's `structuredContent`, when it gave one. */
  structured?: unknown;
  /** True when the tool reported an error. */
  isError?: boolean;
}

/** Longest text part kept inline; the rest is cut with a note (the log keeps what the model saw). */
const TEXT_MAX = 100_000;

/**
 * An MCP result (`CallToolResult`, or resource contents wrapped as `resource` parts) made
 * loggable: text stays inline (cut at 100 000 characters, saying so); images, audio and binary
 * resources are stored in `artifacts` and replaced by `{artifact, media_type, bytes}`; resource
 * links keep their uri and name. Unknown part types are kept as they came. Never throws for a
 * malformed part (it is kept as `{type: "unknown"}` with its JSON cut short).
 */
export async function mcpCallResult(
  result: unknown,
  artifacts: ArtifactStore,
): Promise<McpCallResult> {
  const record = (result ?? {}) as Record<string, unknown>;
  const parts = Array.isArray(record.content) ? record.content : [];
  const content: McpContentPart[] = [];
  for (const part of parts) content.push(await convertPart(part, artifacts));
  return {
    content,
    ...(record.structuredContent !== undefined ? { structured: record.structuredContent } : {}),
    ...(record.isError === true ? { isError: true } : {}),
  };
}

async function convertPart(part: unknown, artifacts: ArtifactStore): Promise<McpContentPart> {
  const value = (part ?? {}) as Record<string, unknown>;
  switch (value.type) {
    case "text":
      return { type: "text", text: cut(String(value.text ?? "")) };
    case "image":
    case "audio":
      return {
        type: value.type,
        ...(await stored(
          value.data,
          String(value.mimeType ?? "application/octet-stream"),
          artifacts,
        )),
      };
    case "resource": {
      const resource = (value.resource ?? {}) as Record<string, unknown>;
      const uri = String(resource.uri ?? "");
      const mediaType = typeof resource.mimeType === "string" ? resource.mimeType : undefined;
      if (typeof resource.text === "string") {
        return {
          type: "resource",
          uri,
          ...(mediaType ? { media_type: mediaType } : {}),
          text: cut(resource.text),
        };
      }
      return {
        type: "resource",
        uri,
        ...(await stored(resource.blob, mediaType ?? "application/octet-stream", artifacts)),
      };
    }
    case "resource_link":
      return {
        type: "resource_link",
        uri: String(value.uri ?? ""),
        ...(typeof value.name === "string" ? { name: value.name } : {}),
        ...(typeof value.description === "string" ? { description: value.description } : {}),
        ...(typeof value.mimeType === "string" ? { media_type: value.mimeType } : {}),
      };
    default:
      return typeof value.type === "string"
        ? { ...value, type: value.type }
        : { type: "unknown", json: JSON.stringify(part ?? null).slice(0, 2000) };
  }
}

async function stored(
  data: unknown,
  mediaType: string,
  artifacts: ArtifactStore,
): Promise<Record<string, unknown>> {
  const bytes = Buffer.from(typeof data === "string" ? data : "", "base64");
  const artifact = (await artifacts.put(bytes, { mediaType })).hash;
  return { artifact, media_type: mediaType, bytes: bytes.length };
}

function cut(text: string): string {
  if (text.length <= TEXT_MAX) return text;
  return `${text.slice(0, TEXT_MAX)}\n[cut: ${text.length - TEXT_MAX} more characters]`;
}

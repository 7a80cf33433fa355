import type { ImagePart, ProviderMessage, ToolResult } from "./provider.js";

/** Every image of `message`, in order: a user message's image parts, each tool result's images. */
export function messageImages(message: ProviderMessage): ImagePart[] {
  if (message.role === "tool") return message.results.flatMap((result) => result.images ?? []);
  if (message.role !== "user" || typeof message.content === "string") return [];
  return message.content.filter((part): part is ImagePart => part.type === "image");
}

/**
 * `message` with each image replaced by what `replace` gives for it: an image (the same, or with
 * its bytes read in), or a text that stands where it was — a text part of a user message, a line
 * after a tool result's output. `message` itself when it holds no image. Pure.
 */
export function replaceImages(
  message: ProviderMessage,
  replace: (image: ImagePart) => ImagePart | string,
): ProviderMessage {
  if (messageImages(message).length === 0) return message;
  if (message.role === "tool") {
    return { role: "tool", results: message.results.map((result) => replaceIn(result, replace)) };
  }
  if (message.role !== "user" || typeof message.content === "string") return message;
  return {
    role: "user",
    content: message.content.map((part) => {
      if (part.type !== "image") return part;
      const next = replace(part);
      return typeof next === "string" ? { type: "text", text: next } : next;
    }),
  };
}

function replaceIn(
  result: ToolResult,
  replace: (image: ImagePart) => ImagePart | string,
): ToolResult {
  if (!result.images || result.images.length === 0) return result;
  const images: ImagePart[] = [];
  const notes: string[] = [];
  for (const image of result.images) {
    const next = replace(image);
    if (typeof next === "string") notes.push(next);
    else images.push(next);
  }
  const { images: _images, ...rest } = result;
  return {
    ...rest,
    ...(notes.length > 0 ? { output: `${result.output}\n${notes.join("\n")}` } : {}),
    ...(images.length > 0 ? { images } : {}),
  };
}

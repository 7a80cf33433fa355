import type { ProviderMessage } from "../providers/index.js";
import type { ContextMessage, ThreadView } from "./context-bundle.js";

/** What stands where an image was left out of a context too small for it. */
export const IMAGE_LEFT_OUT =
  "[image left out: this model's context has no room for it; the text around it says what it showed]";

/** True when any message of `view` carries an image (a user's part, or a tool result's). */
export function viewHasImages(view: ThreadView): boolean {
  return view.messages.some((entry) => messageImages(entry.message) > 0);
}

/**
 * `view` with every image replaced by `IMAGE_LEFT_OUT`: the compile falls back to it when the
 * context does not fit even with every long input cut (a small window and a screenshot). Pure:
 * the same view gives the same result, so replay compiles the same request.
 */
export function withoutImages(view: ThreadView): ThreadView {
  return { ...view, messages: view.messages.map(stripEntry) };
}

function stripEntry(entry: ContextMessage): ContextMessage {
  const { message } = entry;
  if (messageImages(message) === 0) return entry;
  if (message.role === "tool") {
    return {
      ...entry,
      message: {
        role: "tool",
        results: message.results.map(({ images, ...result }) =>
          images && images.length > 0
            ? { ...result, output: `${result.output}\n${IMAGE_LEFT_OUT}` }
            : result,
        ),
      },
    };
  }
  if (message.role !== "user" || typeof message.content === "string") return entry;
  return {
    ...entry,
    message: {
      role: "user",
      content: message.content.map((part) =>
        part.type === "image" ? { type: "text" as const, text: IMAGE_LEFT_OUT } : part,
      ),
    },
  };
}

function messageImages(message: ProviderMessage): number {
  if (message.role === "tool") {
    return message.results.reduce((sum, result) => sum + (result.images?.length ?? 0), 0);
  }
  if (message.role !== "user" || typeof message.content === "string") return 0;
  return message.content.filter((part) => part.type === "image").length;
}

import { messageImages, replaceImages } from "../providers/index.js";
import type { ContextMessage, ThreadView } from "./context-bundle.js";

/** What stands where an image was left out of a context too small for it. */
export const IMAGE_LEFT_OUT =
  "[image left out: this model's context has no room for it; the text around it says what it showed]";

/** True when any message of `view` carries an image (a user's part, or a tool result's). */
export function viewHasImages(view: ThreadView): boolean {
  return view.messages.some((entry) => messageImages(entry.message).length > 0);
}

/**
 * `view` with every image replaced by `IMAGE_LEFT_OUT`: the compile falls back to it when the
 * context does not fit even with every long input cut (a small window and a screenshot). Pure:
 * the same view gives the same result, so replay compiles the same request.
 */
export function withoutImages(view: ThreadView): ThreadView {
  return {
    ...view,
    messages: view.messages.map((entry) => {
      const message = replaceImages(entry.message, () => IMAGE_LEFT_OUT);
      return message === entry.message ? entry : { ...entry, message };
    }),
  };
}

/** What stands where an image was in a message carried into a continuation. */
export const IMAGE_NOT_CARRIED =
  "[image not carried across the handoff: the summary's Visual State at Boundary says what the screen showed]";

/**
 * `messages` with every image replaced by `IMAGE_NOT_CARRIED`: what a continuation of a thread
 * that watched frames is seeded with (images never cross a handoff; the image summarizer's text
 * does). Entries without images are returned as they are. Pure.
 */
export function withoutCarriedImages(messages: readonly ContextMessage[]): ContextMessage[] {
  return messages.map((entry) => {
    const message = replaceImages(entry.message, () => IMAGE_NOT_CARRIED);
    return message === entry.message ? entry : { ...entry, message };
  });
}

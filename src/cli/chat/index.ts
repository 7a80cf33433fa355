/**
 * The terminal of `spool chat`: `createChatRenderer` turns run notices into what the terminal
 * shows (streamed markdown, live actions, usage lines) and `createChatInput` reads the user's
 * turns from a terminal or a pipe. The rest of this folder is their private parts.
 */
export {
  type ChatInput,
  type ChatInputOptions,
  createChatInput,
  type SignalSource,
} from "./chat-input.js";
export {
  type ChatRenderer,
  type ChatRendererOptions,
  type ClockTimers,
  createChatRenderer,
} from "./chat-renderer.js";
export { type DeliveryRecord, deliveryLine, isDeliveryTurn } from "./delivery-line.js";
export {
  createMarkdownStream,
  type MarkdownStream,
  type MarkdownStreamOptions,
} from "./markdown-stream.js";
export { sourceEventLine } from "./source-event-line.js";

/**
 * What the Anthropic SDK prints with `console.warn` on every `messages.create` for a model it
 * knows to be deprecated. Spool says so itself, once per run (`deprecationNotice`); printed by the
 * SDK it floods a chat with one copy per attempt.
 */
const DEPRECATED_MODEL_WARNING = /^The model '[^']*' is deprecated and will reach end-of-life/;

/** SDK warnings already let through: any other warning is printed once per process. */
const printed = new Set<string>();

/**
 * Runs `call` (a synchronous SDK call: `messages.create` warns before it returns its promise)
 * with the SDK's warnings captured: its deprecated-model warning is dropped, any other warning
 * is printed once per process rather than once per attempt. `console.warn` is restored before
 * this returns, so nothing else's warnings are touched.
 */
export function withSdkWarnings<T>(call: () => T): T {
  const original = console.warn;
  console.warn = (...args: unknown[]) => {
    const text = args.map(String).join(" ");
    if (DEPRECATED_MODEL_WARNING.test(text) || printed.has(text)) return;
    printed.add(text);
    original.apply(console, args);
  };
  try {
    return call();
  } finally {
    console.warn = original;
  }
}

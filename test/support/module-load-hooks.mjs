// The loader hooks `module-load-recorder.mjs` registers (they run on the loader's own thread).
import { appendFileSync } from "node:fs";

let file;

/** Receives the log file's path from `register`. */
export function initialize(data) {
  file = data?.file;
}

/** Resolves as usual, noting `<url> <- <importer>` for URLs under `@opentelemetry`. */
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  if (file && result.url.includes("@opentelemetry"))
    appendFileSync(file, `${result.url} <- ${context.parentURL ?? ""}\n`);
  return result;
}

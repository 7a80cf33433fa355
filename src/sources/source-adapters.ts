import { commandEnvironment } from "../tools/index.js";
import { createCommandSource } from "./command-source.js";
import { createDatasetSource } from "./dataset-source.js";
import { createFileSource } from "./file-source.js";
import { createHttpSource } from "./http-source.js";
import type { SourceAccess } from "./source-access.js";
import type { Source, SourceDefinition, SourceKind } from "./source-types.js";
import { createSseSource } from "./sse-source.js";
import { createWebSocketSource } from "./websocket-source.js";

/**
 * Makes the source of one kind from a definition and the access `checkSourceAccess` granted it:
 * an adapter reads exactly where the access says (the real path, the checked URL), never the
 * definition's target as written.
 */
export type SourceAdapter = (definition: SourceDefinition, access: SourceAccess) => Source;

/** An adapter per kind; a kind without one cannot be started (`source.unsupported`). */
export type SourceAdapters = Partial<Record<SourceKind, SourceAdapter>>;

/** The real adapters: files, datasets, commands, HTTP polling, SSE and WebSocket feeds. */
export const DEFAULT_SOURCE_ADAPTERS: SourceAdapters = {
  file: (definition, access) => createFileSource(definition, { path: pathOf(access) }),
  dataset: (definition, access) => createDatasetSource(definition, { path: pathOf(access) }),
  // A command gets the small environment `shell.run` gives: never the runtime's secrets.
  command: (definition, access) => {
    if (access.kind !== "command")
      throw new TypeError(`a command source got ${access.kind} access`);
    return createCommandSource(definition, { cwd: access.cwd, env: commandEnvironment() });
  },
  http: (definition, access) => createHttpSource(definition, { url: urlOf(access) }),
  sse: (definition, access) => createSseSource(definition, { url: urlOf(access) }),
  websocket: (definition, access) => createWebSocketSource(definition, { url: urlOf(access) }),
};

function pathOf(access: SourceAccess): string {
  if (access.kind !== "file" && access.kind !== "dataset") {
    throw new TypeError(`a file source got ${access.kind} access`);
  }
  return access.path;
}

function urlOf(access: SourceAccess): URL {
  if (access.kind !== "http" && access.kind !== "sse" && access.kind !== "websocket") {
    throw new TypeError(`a network source got ${access.kind} access`);
  }
  return access.url;
}

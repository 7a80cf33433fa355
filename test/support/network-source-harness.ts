/**
 * What the network source tests (http, sse, websocket) share: a `Watch` to wait for conditions on
 * either side (an emission recorded, a request reaching the server), a source run whose `emit`
 * records, refuses or holds emissions, and a loopback HTTP server that can restart on its port.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import {
  DEFAULT_BATCHING,
  type Source,
  type SourceChunkEmission,
  type SourceCursor,
  type SourceDefinition,
  type SourceEmission,
  type SourceNoticeEmission,
} from "../../src/sources/index.js";

/** How long a condition may take before the test fails saying what it waited for (a deadline, not a sleep). */
const DEADLINE_MS = 20_000;

/** Conditions re-checked whenever something they read may have changed (`changed()`). */
export class Watch {
  readonly #checks = new Set<() => void>();

  /** Something changed: re-check every waiting condition. */
  changed(): void {
    for (const check of [...this.#checks]) check();
  }

  /** Resolves once `condition` holds; rejects after the deadline with `what` and `describe()`. */
  until(what: string, condition: () => boolean, describe: () => string = () => ""): Promise<void> {
    return new Promise((resolve, reject) => {
      const deadline = setTimeout(() => {
        this.#checks.delete(check);
        reject(new Error(`waited for ${what}; ${describe()}`));
      }, DEADLINE_MS);
      const check = (): void => {
        if (!condition()) return;
        clearTimeout(deadline);
        this.#checks.delete(check);
        resolve();
      };
      this.#checks.add(check);
      check();
    });
  }
}

/** A source started by a test. */
export interface SourceRun {
  /** The emissions the runner accepted (their `emit` resolved), in order. */
  emissions: SourceEmission[];
  /** Resolves when `run` returned. */
  done: Promise<void>;
  /** Whether `run` has returned. */
  readonly returned: boolean;
  /** Aborts the signal and waits for `run` to return. */
  stop(): Promise<void>;
  /** Waits until `predicate` holds for the accepted emissions. */
  until(what: string, predicate: (emissions: SourceEmission[]) => boolean): Promise<void>;
}

/**
 * Runs `source` from `cursor`. `accept` runs inside `emit` first: it may wait (a slow runner) or
 * throw (the runner stopped: the emission is not recorded and `emit` rejects).
 */
export function startRun(
  source: Source,
  watch: Watch,
  options: {
    cursor?: SourceCursor;
    accept?: (emission: SourceEmission) => Promise<void> | void;
  } = {},
): SourceRun {
  const controller = new AbortController();
  const emissions: SourceEmission[] = [];
  let returned = false;
  const emit = async (emission: SourceEmission): Promise<void> => {
    try {
      await options.accept?.(emission);
    } finally {
      watch.changed();
    }
    emissions.push(emission);
    watch.changed();
  };
  const done = source.run({ cursor: options.cursor, signal: controller.signal, emit }).then(() => {
    returned = true;
    watch.changed();
  });
  return {
    emissions,
    done,
    get returned() {
      return returned;
    },
    stop: async () => {
      controller.abort();
      await done;
    },
    until: (what, predicate) =>
      watch.until(
        what,
        () => predicate(emissions),
        () => `got ${JSON.stringify(emissions).slice(0, 3000)}`,
      ),
  };
}

/** The chunks among `emissions`. */
export function chunksOf(emissions: readonly SourceEmission[]): SourceChunkEmission[] {
  return emissions.filter((emission): emission is SourceChunkEmission => emission.type === "chunk");
}

/** Every line of every chunk, in order. */
export function linesOf(emissions: readonly SourceEmission[]): string[] {
  return chunksOf(emissions).flatMap((chunk) => chunk.lines);
}

/** The notices among `emissions`, optionally only those with `code`. */
export function noticesOf(
  emissions: readonly SourceEmission[],
  code?: string,
): SourceNoticeEmission[] {
  return emissions.filter(
    (emission): emission is SourceNoticeEmission =>
      emission.type === "notice" && (code === undefined || emission.code === code),
  );
}

/** A definition for tests, with small waits so held chunks go out quickly. */
export function networkDefinition(
  kind: "http" | "sse" | "websocket",
  target: string,
  options: SourceDefinition["options"] = {},
  batching: Partial<SourceDefinition["batching"]> = {},
): SourceDefinition {
  return {
    id: `test-${kind}`,
    kind,
    target,
    include: [],
    exclude: [],
    mode: "state",
    patterns: {},
    options,
    batching: { ...DEFAULT_BATCHING, maxWaitMs: 5, ...batching },
  };
}

/** A loopback HTTP server whose handler a test writes; it can restart on the same port. */
export interface LoopbackHttp {
  readonly server: Server;
  readonly port: number;
  /** `http://127.0.0.1:<port><path>` */
  url(path?: string): string;
  /** Sockets open now. */
  readonly sockets: ReadonlySet<Socket>;
  /** Closes the server and every connection to it (the clients see them cut). */
  close(): Promise<void>;
  /** `close()`, then listens again on the same port with the same handler. */
  restart(): Promise<void>;
}

/** Starts a server on 127.0.0.1 (a free port) calling `handler`; `watch.changed()` on every connection change. */
export async function startHttp(
  watch: Watch,
  handler: (request: IncomingMessage, response: ServerResponse) => void,
): Promise<LoopbackHttp> {
  const sockets = new Set<Socket>();
  let server = createServer(handler);
  const track = (target: Server) =>
    target.on("connection", (socket) => {
      sockets.add(socket);
      watch.changed();
      socket.on("close", () => {
        sockets.delete(socket);
        watch.changed();
      });
    });
  track(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const close = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const socket of sockets) socket.destroy();
    await closed;
  };
  return {
    get server() {
      return server;
    },
    port,
    url: (path = "/") => `http://127.0.0.1:${port}${path}`,
    sockets,
    close,
    restart: async () => {
      await close();
      server = track(createServer(handler));
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
    },
  };
}

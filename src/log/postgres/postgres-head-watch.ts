import pg from "pg";
import { NOTIFY_CHANNEL } from "./postgres-events.js";

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5000;

/** What `PostgresHeadWatch` needs from its backend. */
export interface HeadWatchSource {
  /** Settings for a new, unpooled connection. */
  config: pg.ClientConfig;
  /** Reads the committed head (on the given connection). */
  readHead(client: pg.ClientBase): Promise<number>;
}

interface Watcher {
  listener: (head: number) => void;
}

/**
 * Follows commits by other writers through `LISTEN spool_log` on one dedicated connection (a
 * pooled one would be handed to other work and lose the subscription).
 *
 * Contract: the connection opens with the first listener and closes with the last. Once LISTEN is
 * in effect every listener is called with the current head, so a commit that landed before the
 * subscription took hold is never missed; after that, with the seq each notification carries. A
 * dropped connection is reopened with backoff (0.1 s doubling to 5 s) and the head is reported
 * again after the new LISTEN, covering whatever was committed while it was down. A listener that
 * throws does not affect the others. Nothing here ever throws into the caller or the process.
 */
export class PostgresHeadWatch {
  readonly #source: HeadWatchSource;
  readonly #watchers = new Set<Watcher>();
  #client: pg.Client | undefined;
  #live = false;
  /** Bumped on every start and stop, so work of an abandoned connection attempt is ignored. */
  #generation = 0;
  #retry: NodeJS.Timeout | undefined;
  #delay = FIRST_RETRY_MS;

  constructor(source: HeadWatchSource) {
    this.#source = source;
  }

  /** Adds a listener; returns a function that removes it (idempotent). */
  add(listener: (head: number) => void): () => void {
    const watcher: Watcher = { listener };
    this.#watchers.add(watcher);
    if (this.#watchers.size === 1) this.#start();
    else if (this.#live && this.#client)
      this.#reportHead(this.#client, this.#generation, [watcher]);
    return () => {
      if (this.#watchers.delete(watcher) && this.#watchers.size === 0) void this.#stop();
    };
  }

  /** Removes every listener and closes the connection. */
  close(): Promise<void> {
    this.#watchers.clear();
    return this.#stop();
  }

  #start(): void {
    const generation = ++this.#generation;
    const client = new pg.Client(this.#source.config);
    this.#client = client;
    // Without an `error` listener a dropped socket would crash the process.
    client.on("error", () => this.#lost(client));
    client.on("end", () => this.#lost(client));
    client.on("notification", (message) => {
      if (message.channel !== NOTIFY_CHANNEL || generation !== this.#generation) return;
      const head = Number(message.payload);
      if (Number.isSafeInteger(head)) this.#emit([...this.#watchers], head);
    });
    client
      .connect()
      .then(() => client.query(`LISTEN ${NOTIFY_CHANNEL}`))
      .then(() => {
        if (generation !== this.#generation) return;
        this.#live = true;
        this.#delay = FIRST_RETRY_MS;
        this.#reportHead(client, generation, undefined);
      })
      .catch(() => this.#lost(client));
  }

  /** Reports the current head to `only` (or to every listener), if still on that connection. */
  #reportHead(client: pg.Client, generation: number, only: Watcher[] | undefined): void {
    this.#source
      .readHead(client)
      .then((head) => {
        if (generation !== this.#generation) return;
        this.#emit(
          only?.filter((watcher) => this.#watchers.has(watcher)) ?? [...this.#watchers],
          head,
        );
      })
      .catch(() => this.#lost(client));
  }

  #emit(watchers: Watcher[], head: number): void {
    for (const watcher of watchers) {
      try {
        watcher.listener(head);
      } catch {
        // One listener's failure is its own; the others still hear of the commit.
      }
    }
  }

  #lost(client: pg.Client): void {
    if (client !== this.#client) return;
    this.#client = undefined;
    this.#live = false;
    client.end().catch(() => undefined);
    if (this.#watchers.size === 0) return;
    const generation = ++this.#generation;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (generation === this.#generation && this.#watchers.size > 0) this.#start();
    }, this.#delay);
    this.#delay = Math.min(this.#delay * 2, MAX_RETRY_MS);
  }

  #stop(): Promise<void> {
    this.#generation += 1;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    this.#live = false;
    this.#delay = FIRST_RETRY_MS;
    const client = this.#client;
    this.#client = undefined;
    return client ? client.end().catch(() => undefined) : Promise.resolve();
  }
}

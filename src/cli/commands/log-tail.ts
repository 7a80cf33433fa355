import type { EventStore } from "../../log/index.js";
import type { SpoolEvent } from "../../spec/index.js";
import {
  type CommandContext,
  continuityNotFound,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  parseInteger,
  storeNotFound,
  UsageError,
  withStore,
} from "../context.js";
import { formatEventLine } from "../format.js";

const DEFAULT_LINES = 20;

/**
 * `spool log tail`: the last events of the log or of one continuity; with `--follow`, then every
 * new event as it is appended, until SIGINT, SIGTERM or `io.signal` (exit 0).
 */
export async function logTail(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "log tail";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    continuity: { type: "string" },
    after: { type: "string" },
    lines: { type: "string", short: "n" },
    follow: { type: "boolean", short: "f" },
    json: { type: "boolean" },
  });
  if (positionals.length > 0) {
    throw new UsageError(
      command,
      `unexpected argument ${JSON.stringify(positionals[0])} (use --continuity to pick one)`,
    );
  }
  const after = parseInteger(command, "--after", values.after, 0);
  const lines = parseInteger(command, "--lines", values.lines, 0);
  if (after !== undefined && lines !== undefined) {
    throw new UsageError(command, "--after and --lines cannot be combined; pick one");
  }
  const { continuity, follow } = values;
  const target = locateStore(ctx, values.db);
  // Following a store that does not exist yet creates it and waits; a plain read does not.
  if (!target.exists && !follow) {
    throw continuity === undefined ? storeNotFound(target) : continuityNotFound(target, continuity);
  }
  const print = (event: SpoolEvent) =>
    ctx.out(
      values.json
        ? JSON.stringify(event)
        : formatEventLine(event, {
            style: ctx.style,
            width: ctx.width,
            showContinuity: continuity === undefined,
          }),
    );
  await withStore(ctx, target, async (store) => {
    if (continuity !== undefined && !follow && !(await store.continuity(continuity))) {
      throw continuityNotFound(target, continuity);
    }
    const start = after ?? (await startOfLast(store, continuity, lines ?? DEFAULT_LINES));
    const scope = continuity === undefined ? {} : { continuity };
    if (!follow) {
      for await (const event of store.read({ ...scope, after: start })) print(event);
      return;
    }
    await followLog(ctx, store, { ...scope, after: start }, print);
  });
  return 0;
}

/**
 * Catches up from `query.after`, then prints live events until SIGINT, SIGTERM or
 * `ctx.io.signal`; says `— live —` on stderr once caught up. Shared by `log tail` and `tail`.
 */
export async function followLog(
  ctx: CommandContext,
  store: EventStore,
  query: { continuity?: string; after: number },
  print: (event: SpoolEvent) => void,
): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  ctx.io.signal?.addEventListener("abort", onSignal, { once: true });
  if (ctx.io.signal?.aborted) stop.abort();
  try {
    for await (const message of store.subscribe({ ...query, signal: stop.signal })) {
      if (message.type === "event") print(message.event);
      else ctx.err(ctx.errStyle.dim("— live —"));
    }
  } finally {
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
    ctx.io.signal?.removeEventListener("abort", onSignal);
  }
}

/**
 * The seq after which the last `count` events of the log (or of `continuity`) begin. Reads
 * backwards in growing windows, so a busy log is not scanned from its start.
 */
async function startOfLast(
  store: EventStore,
  continuity: string | undefined,
  count: number,
): Promise<number> {
  const head = await store.head();
  if (count === 0) return head;
  let floor = 0;
  let upper = head;
  if (continuity !== undefined) {
    const info = await store.continuity(continuity);
    if (!info) return head;
    if (info.events <= count) return info.firstSeq - 1;
    floor = info.firstSeq - 1;
    upper = info.lastSeq;
  }
  let window = Math.max(64, count * 4);
  for (;;) {
    const lower = Math.max(floor, upper - window);
    // The seqs of the events in (lower, upper]: at most `window` of them.
    const seqs: number[] = [];
    const query = {
      ...(continuity === undefined ? {} : { continuity }),
      after: lower,
      until: upper,
    };
    for await (const event of store.read(query)) seqs.push(event.seq);
    if (seqs.length >= count) return seqs[seqs.length - count]! - 1;
    if (lower === floor) return floor;
    window *= 4;
  }
}

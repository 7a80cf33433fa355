import { openMemoryIndex } from "../../memory/index.js";
import {
  type CommandContext,
  DB_OPTION,
  locateStore,
  parseCommandArgs,
  parseIdentifier,
  parseInteger,
  storeNotFound,
  UsageError,
  withStore,
} from "../context.js";
import { DB_HELP_LINES } from "../db-help.js";
import { formatTime, oneLine, renderTable, truncate } from "../format.js";
import type { CommandHelp } from "../usage.js";

/** Help of `spool memory`. */
export const MEMORY_USAGE: CommandHelp = {
  synopsis: "spool memory search <query…> | spool memory reindex",
  text: `Usage: spool memory search <query…> [--limit N] [--actor A] [--json]
       spool memory reindex

The summaries and pinned facts of every continuity of the store, indexed for search (see
docs/memory.md). The index is derived from the log and catches up before each search.

Commands:
  memory search <query…>  Search the memory; prints rank, kind, continuity, date and text
  memory reindex          Drop the index and rebuild it from the log

Run \`spool memory search --help\` for its options.
`,
};

/** Help of `spool memory search`. */
export const MEMORY_SEARCH_USAGE: CommandHelp = {
  synopsis: "spool memory search <query…> [--limit N] [--actor A] [--json]",
  text: `Usage: spool memory search <query…> [--limit N] [--actor A] [--json]

Searches the summaries and pinned facts of the store's continuities, best first: full-text
ranking (FTS5 bm25 on SQLite, ts_rank_cd on PostgreSQL), fused with embeddings when
SPOOL_EMBEDDING_MODEL is set. Any text is a valid query. Exit code 1 when nothing matches.

Options:
  --limit <n>            Hits to show, 1 to 100 (default 5)
  --actor <id>           Only continuities this actor took part in
  --json                 Print one JSON object per hit (the whole text)
${DB_HELP_LINES}

Examples:
  spool memory search "billing deploy key"
  spool memory search what did we decide about the cache --limit 10 --json
`,
};

/** Help of `spool memory reindex`. */
export const MEMORY_REINDEX_USAGE: CommandHelp = {
  synopsis: "spool memory reindex",
  text: `Usage: spool memory reindex

Drops the memory index and rebuilds it from the whole log (every summary.completed and pinned
fact, less what was unpinned or brought up to date), embedding each entry again when
SPOOL_EMBEDDING_MODEL is set. Prints how many entries it holds and the log position reached.

Options:
${DB_HELP_LINES}

Examples:
  spool memory reindex
`,
};

/**
 * `spool memory search <query…> [--limit N] [--actor A] [--json]`: the best hits of the store's
 * memory index (caught up first). Exit 1 when there is none; never creates a store.
 */
export async function memorySearchCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "memory search";
  const { values, positionals } = parseCommandArgs(command, args, {
    ...DB_OPTION,
    limit: { type: "string" },
    actor: { type: "string" },
    json: { type: "boolean" },
  });
  const text = positionals.join(" ").trim();
  if (text === "") throw new UsageError(command, "missing <query…>: what to look for");
  const limit = parseInteger(command, "--limit", values.limit, 1) ?? 5;
  if (limit > 100) throw new UsageError(command, `--limit must be at most 100, not ${limit}`);
  const actor =
    values.actor !== undefined ? parseIdentifier(command, "--actor", values.actor) : undefined;
  const target = locateStore(ctx, values.db);
  if (!target.exists) throw storeNotFound(target);
  const found = await withStore(ctx, target, async (store) => {
    const index = await openMemoryIndex({ store, db: target.db, cwd: ctx.io.cwd, env: ctx.io.env });
    try {
      return await index.search({ text, limit, ...(actor !== undefined ? { actor } : {}) });
    } finally {
      await index.close();
    }
  });
  if (found.degraded) ctx.err(ctx.errStyle.dim(`Full text alone: ${found.degraded}`));
  if (values.json) {
    for (const hit of found.hits) ctx.out(JSON.stringify({ ...hit, ranking: found.ranking }));
    return found.hits.length > 0 ? 0 : 1;
  }
  if (found.hits.length === 0) {
    ctx.err(`Nothing in memory matches ${JSON.stringify(truncate(oneLine(text), 60))}.`);
    return 1;
  }
  const room = Math.max(20, ctx.width - 60);
  ctx.io.stdout.write(
    renderTable(
      ["#", "KIND", "CONTINUITY", "WRITTEN", "TEXT"],
      found.hits.map((hit) => [
        String(hit.rank),
        hit.kind,
        truncate(oneLine(hit.continuity), 20),
        formatTime(hit.ts),
        truncate(oneLine(hit.text), room),
      ]),
      ctx.style,
    ),
  );
  return 0;
}

/** `spool memory reindex`: drops the memory index and rebuilds it from the log. */
export async function memoryReindexCommand(ctx: CommandContext, args: string[]): Promise<number> {
  const command = "memory reindex";
  const { positionals, values } = parseCommandArgs(command, args, { ...DB_OPTION });
  if (positionals.length > 0) {
    throw new UsageError(command, `unexpected argument ${JSON.stringify(positionals[0])}`);
  }
  const target = locateStore(ctx, values.db);
  if (!target.exists) throw storeNotFound(target);
  const rebuilt = await withStore(ctx, target, async (store) => {
    const index = await openMemoryIndex({
      store,
      db: target.db,
      cwd: ctx.io.cwd,
      env: ctx.io.env,
      replaceDamaged: true,
    });
    try {
      return await index.reindex();
    } finally {
      await index.close();
    }
  });
  ctx.out(
    `Reindexed ${rebuilt.entries} ${rebuilt.entries === 1 ? "entry" : "entries"} up to log position ${rebuilt.position}.`,
  );
  return 0;
}

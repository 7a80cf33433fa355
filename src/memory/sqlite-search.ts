import type Database from "better-sqlite3";
import type { MemoryScope } from "./memory-backend.js";
import { fts5Match } from "./memory-query.js";

/** A term in more than this share of the entries is too common to rank on (when others are not). */
const COMMON_SHARE = 0.01;
/** ...and never below this many entries: in a small index every term tells. */
const COMMON_MIN = 500;
/** The most matches one search ranks: the newest ones, when a query matches more. */
export const CANDIDATES = 1000;
/** The most terms a query of common terms alone ANDs (the query's own order: most repeated first). */
const COMMON_TERMS = 6;
/** A query of common terms alone looks only at this many of the newest entries. */
export const COMMON_WINDOW = 4 * CANDIDATES;

/**
 * A common term in more than this share of the entries (estimated from its oldest postings) is
 * left out of a query of common terms alone while a less dense one is left: it tells next to
 * nothing (bm25 gives it no weight at all past half of the entries), and reading its postings
 * newest first costs in proportion to the whole index.
 */
const DENSE_SHARE = 0.2;

/** The common terms to AND, least dense first: those under DENSE_SHARE, else the least dense one. */
function telling(common: readonly { term: string; density: number }[]): string[] {
  const sorted = [...common].sort((a, b) => a.density - b.density);
  const sparse = sorted.filter(({ density }) => density <= DENSE_SHARE);
  return (sparse.length > 0 ? sparse : sorted.slice(0, 1))
    .slice(0, COMMON_TERMS)
    .map(({ term }) => term);
}

/** A prepared statement by its SQL (the caller caches them). */
export type Statements = (sql: string) => Database.Statement;

/** An entry a search chose: its row in `memory_entries` and its score (higher is better). */
export interface RankedRow {
  rowid: number;
  score: number;
}

/**
 * The plan of a SQLite memory search; every step reads a bounded part of the FTS5 index, so no
 * query costs in proportion to the index (docs/memory.md, "Ranking"):
 *
 * 1. each term's document frequency, counted only up to the common threshold (1% of the entries,
 *    at least 500);
 * 2. with telling terms (under the threshold): bm25 (FTS5 `rank`) over the newest CANDIDATES
 *    entries that hold all of them, then, when that finds fewer than `limit`, any of them. bm25
 *    reads every posting of each term it ranks on (its idf), which is cheap only because these
 *    terms are rare;
 * 3. with common terms alone: no bm25 (its idf would read postings of most of the index): the
 *    least dense COMMON_TERMS of them (none denser than DENSE_SHARE unless all are), and among
 *    the newest COMMON_WINDOW entries the newest holding all of those, then all but the densest,
 *    … down to any one of them; an entry scores the number of terms it holds.
 *
 * The scope filters inside the same bounded candidates. Returns rows best first, at most `limit`.
 */
export function searchRows(
  statements: Statements,
  terms: readonly string[],
  scope: MemoryScope,
  limit: number,
): RankedRow[] {
  if (terms.length === 0 || limit <= 0) return [];
  const size = (statements("SELECT max(rowid) FROM memory_entries").pluck().get() ?? 0) as number;
  const threshold = Math.max(COMMON_MIN, Math.ceil(size * COMMON_SHARE));
  // Postings are read oldest first, each term's only up to the threshold: the count says whether
  // it is rare, and for a common one the rowid reached says how dense it is.
  const probe = statements(
    "SELECT count(*) AS df, max(rowid) AS reached FROM (SELECT rowid FROM memory_text WHERE memory_text MATCH ? LIMIT ?)",
  );
  const common: { term: string; density: number }[] = [];
  const rare: string[] = [];
  for (const term of terms) {
    const { df, reached } = probe.get(fts5Match([term]), threshold) as {
      df: number;
      reached: number | null;
    };
    if (df === 0) continue;
    if (df < threshold) rare.push(term);
    else common.push({ term, density: df / Math.max(1, reached ?? 1) });
  }
  if (rare.length === 0) {
    const window = Math.max(0, size - COMMON_WINDOW);
    return coordinated(statements, telling(common), window, scope, limit);
  }
  if (rare.length > 1) {
    const all = ranked(statements, fts5Match(rare, "AND"), scope, limit);
    if (all.length >= limit) return all;
  }
  return ranked(statements, fts5Match(rare, "OR"), scope, limit);
}

/** The rowid of the CANDIDATES-th newest match of `match` (0 when it has fewer). */
function floorOf(statements: Statements, match: string): number {
  return (statements(
    "SELECT rowid FROM memory_text WHERE memory_text MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
  )
    .pluck()
    .get(match, CANDIDATES - 1) ?? 0) as number;
}

/** The best `limit` rows within `scope` by bm25, among the newest CANDIDATES matches of `match`. */
function ranked(
  statements: Statements,
  match: string,
  scope: MemoryScope,
  limit: number,
): RankedRow[] {
  const floor = floorOf(statements, match);
  const { sql, params } = scoped(
    "SELECT m.rowid AS rowid, -m.score AS score FROM (SELECT rowid, rank AS score FROM memory_text WHERE memory_text MATCH ? AND rowid >= ? ORDER BY rank LIMIT ?) AS m JOIN memory_entries e ON e.rowid = m.rowid WHERE 1",
    scope,
  );
  return statements(`${sql} ORDER BY m.score LIMIT ?`).all(
    match,
    floor,
    CANDIDATES,
    ...params,
    limit,
  ) as RankedRow[];
}

/**
 * Common terms alone: the newest rows within `scope` and after the rowid `after` (the newest
 * COMMON_WINDOW entries) holding all of `terms`, then all but the last, … down to any one of
 * them; a row scores the number of terms of the step that found it. Each step walks the terms'
 * postings from the newest back to `after` at most, never the whole index.
 */
function coordinated(
  statements: Statements,
  terms: readonly string[],
  after: number,
  scope: MemoryScope,
  limit: number,
): RankedRow[] {
  const { sql, params } = scoped(
    "SELECT m.rowid AS rowid FROM memory_text m CROSS JOIN memory_entries e ON e.rowid = m.rowid WHERE memory_text MATCH ? AND m.rowid > ?",
    scope,
  );
  const newest = statements(`${sql} ORDER BY m.rowid DESC LIMIT ?`).pluck();
  const rows: RankedRow[] = [];
  const seen = new Set<number>();
  for (let held = terms.length; held > 0 && rows.length < limit; held--) {
    // The last step takes any of the terms, so that a scope excluding every entry of the least
    // dense one still finds the others.
    const match = held > 1 ? fts5Match(terms.slice(0, held), "AND") : fts5Match(terms, "OR");
    for (const rowid of newest.all(match, after, ...params, limit + seen.size) as number[]) {
      if (seen.has(rowid)) continue;
      seen.add(rowid);
      rows.push({ rowid, score: held });
      if (rows.length >= limit) break;
    }
  }
  return rows;
}

/** `sql` narrowed to `scope`: the SQL and its parameters after the ones `sql` already has. */
export function scoped(sql: string, scope: MemoryScope): { sql: string; params: string[] } {
  const params: string[] = [];
  let text = sql;
  const exclude = scope.exclude ?? [];
  if (exclude.length > 0) {
    text += ` AND e.continuity NOT IN (${exclude.map(() => "?").join(", ")})`;
    params.push(...exclude);
  }
  if (scope.actor !== undefined) {
    text += " AND e.continuity IN (SELECT continuity FROM memory_actors WHERE actor = ?)";
    params.push(scope.actor);
  }
  return { sql: text, params };
}

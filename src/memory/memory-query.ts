/** The most terms one search uses: a long query (a handoff summary) keeps its most telling ones. */
export const MAX_QUERY_TERMS = 24;

/** Words too common to tell one memory from another (English), left out of every query. */
const STOPWORDS = new Set(
  (
    "a about above after again against all also am an and any are as at be because been before " +
    "being below between both but by can could did do does doing down during each else ever few " +
    "for from further get got had has have having he her here hers herself him himself his how i " +
    "if in into is it its itself just let like me more most my myself no nor not now of off on " +
    "once only or other our ours ourselves out over own really same she should so some such than " +
    "that the their theirs them themselves then there these they this those through to too under " +
    "until up us very was we were what when where which while who whom why will with would yes " +
    "yet you your yours yourself yourselves ok okay please thanks thank tell know remember say " +
    "said told again anything something thing things one"
  ).split(" "),
);

/**
 * The search terms of a query in any text a user, a model or a summary gives: lower-cased runs of
 * letters and digits (any script), without common English words and one-letter terms, each once,
 * at most `MAX_QUERY_TERMS` (the most frequent in the text first, then the longest). Never throws;
 * an empty list means nothing to search for. The terms hold no quote, operator or punctuation,
 * so no query text can make a search a syntax error on either backend.
 */
export function queryTerms(text: string): string[] {
  const counts = new Map<string, { count: number; first: number }>();
  let index = 0;
  for (const match of text
    .normalize("NFKC")
    .toLowerCase()
    .matchAll(/[\p{L}\p{N}]+/gu)) {
    const term = match[0].slice(0, 64);
    if (term.length < 2 || STOPWORDS.has(term)) continue;
    const seen = counts.get(term);
    if (seen) seen.count += 1;
    else counts.set(term, { count: 1, first: index++ });
  }
  return [...counts.entries()]
    .sort(([a, x], [b, y]) => y.count - x.count || b.length - a.length || x.first - y.first)
    .slice(0, MAX_QUERY_TERMS)
    .map(([term]) => term);
}

/**
 * An FTS5 MATCH expression: any of the terms (`OR`, the default) or all of them (`AND`), each a
 * quoted string (see `queryTerms`).
 */
export function fts5Match(terms: readonly string[], join: "AND" | "OR" = "OR"): string {
  return terms.map((term) => `"${term}"`).join(` ${join} `);
}

/** A `websearch_to_tsquery` text: any of the terms (see `queryTerms`). */
export function websearchText(terms: readonly string[]): string {
  return terms.join(" or ");
}

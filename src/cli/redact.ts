/**
 * `url` with its password removed (the `user:password@` part and any query parameter whose name
 * mentions a password), safe to print. Text that does not parse as a URL gets the same treatment
 * by pattern.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.password && ![...parsed.searchParams.keys()].some(isSecretKey)) return url;
    parsed.password = "";
    for (const key of [...parsed.searchParams.keys()]) {
      if (isSecretKey(key)) parsed.searchParams.delete(key);
    }
    return parsed.toString();
  } catch {
    return redactByPattern(url);
  }
}

/**
 * `text` with every password removed from the URLs in it (`postgres://user:secret@host` becomes
 * `postgres://user@host`) and from `password=…` pairs. Everything the CLI prints about a store
 * location or an error passes through here.
 */
export function redactSecrets(text: string): string {
  return redactByPattern(
    text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s'"`<>]+/gi, (match) => {
      // A URL at the end of a sentence keeps its closing punctuation outside the URL.
      const trailing = /[.,;:)\]]+$/.exec(match)?.[0] ?? "";
      return redactUrl(match.slice(0, match.length - trailing.length)) + trailing;
    }),
  );
}

function isSecretKey(key: string): boolean {
  return /pass|secret|token/i.test(key);
}

function redactByPattern(text: string): string {
  return text
    .replace(/(\/\/[^\s:/@]*):[^\s@]*@/g, "$1@")
    .replace(/\b(\w*(?:password|passwd|secret)\w*\s*=\s*)[^\s&]+/gi, "$1***");
}

/** `value` quoted for a POSIX shell when it needs quoting, for commands the CLI suggests. */
export function shellQuote(value: string): string {
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(value)) return value;
  return `'${value.replace(/'/g, `'"'"'`)}'`;
}

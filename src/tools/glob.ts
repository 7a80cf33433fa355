import { ToolError } from "./tool-error.js";

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * `glob` as an anchored regular expression over `/`-separated paths: `*` (any characters but
 * `/`), `**` (any characters, `/` included; `**` followed by `/` also matches no folder at all), `?`,
 * `[abc]`, `[!abc]` and `{a,b}` (not nested). A backslash escapes the next character.
 * Throws `ToolError` `tool.bad-pattern` on an unclosed `{`.
 */
export function globToRegExp(glob: string): RegExp {
  let source = "";
  let inBraces = false;
  for (let index = 0; index < glob.length; index += 1) {
    const char = glob[index] as string;
    if (char === "*") {
      if (glob[index + 1] === "*") {
        index += 1;
        if (glob[index + 1] === "/") {
          index += 1;
          source += "(?:.*/)?";
        } else {
          source += ".*";
        }
      } else {
        source += "[^/]*";
      }
    } else if (char === "?") {
      source += "[^/]";
    } else if (char === "[") {
      const close = glob.indexOf("]", index + 2);
      if (close === -1) {
        source += "\\[";
        continue;
      }
      let body = glob.slice(index + 1, close);
      const negated = body.startsWith("!") || body.startsWith("^");
      if (negated) body = body.slice(1);
      source += `[${negated ? "^" : ""}${body.replace(/[\\\]^]/g, "\\$&")}]`;
      index = close;
    } else if (char === "{" && !inBraces) {
      inBraces = true;
      source += "(?:";
    } else if (char === "}" && inBraces) {
      inBraces = false;
      source += ")";
    } else if (char === "," && inBraces) {
      source += "|";
    } else if (char === "\\" && index + 1 < glob.length) {
      index += 1;
      source += escapeRegExp(glob[index] as string);
    } else {
      source += escapeRegExp(char);
    }
  }
  if (inBraces) {
    throw new ToolError("tool.bad-pattern", `the glob \`${glob}\` has an unclosed \`{\``, {
      hint: "Close the brace, e.g. `*.{ts,js}`, or escape it as `\\{`",
    });
  }
  return new RegExp(`^${source}$`);
}

/**
 * A predicate for `glob` over paths relative to the folder searched: a glob without `/` matches
 * the file's name at any depth (`*.ts`); one with `/` matches the whole relative path
 * (`src/**\/*.ts`). A leading `./` is ignored.
 */
export function createGlobMatcher(glob: string): (relative: string) => boolean {
  const trimmed = glob.startsWith("./") ? glob.slice(2) : glob;
  const pattern = globToRegExp(trimmed);
  if (trimmed.includes("/")) return (relative) => pattern.test(relative);
  return (relative) => pattern.test(relative.slice(relative.lastIndexOf("/") + 1));
}

import { readXmlDocument, readXmlElement, type XmlElement } from "./xml-reader.js";

/** The metadata block found in a directive's markdown, and the markdown around it. */
export interface DirectiveBlock {
  /** The `<directive>` element. */
  element: XmlElement;
  /** Everything outside the block (the fence lines included in the block), trimmed. */
  body: string;
}

/** A directive file without a readable metadata block; `line` is 1-based. */
export class DirectiveBlockError extends Error {
  readonly line: number | undefined;

  constructor(message: string, line?: number) {
    super(message);
    this.name = "DirectiveBlockError";
    this.line = line;
  }
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})[ \t]*xml[ \t]*$/i;

/**
 * Finds the metadata block of a directive file, in either form:
 *
 * - a fenced code block tagged `xml` whose document is a `<directive …>` element (the form of
 *   the seed's directives): the first such fence is the metadata, later ones are just markdown;
 * - a bare `<directive …>…</directive>` at the top of the file (only whitespace and comments
 *   before it).
 *
 * Throws `XmlSyntaxError` (positions are of the whole file) for a block that is not well-formed
 * and `DirectiveBlockError` when there is no block.
 */
export function findDirectiveBlock(text: string): DirectiveBlock {
  const bare = /^(?:\s|<!--[\s\S]*?-->|<\?xml[\s\S]*?\?>)*<directive[\s/>]/.exec(text);
  if (bare) {
    const { element, end } = readXmlElement(text, 0);
    return { element, body: text.slice(end).trim() };
  }
  const lines = text.split("\n");
  let offset = 0;
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!;
    const open = FENCE_OPEN.exec(line.replace(/\r$/, ""));
    const lineStart = offset;
    offset += line.length + 1;
    if (!open) continue;
    const fence = open[1]!;
    const close = new RegExp(
      `^ {0,3}${fence[0] === "`" ? "`" : "~"}{${fence.length},}[ \\t]*\\r?$`,
    );
    let closeIndex = -1;
    let closeOffset = offset;
    for (let scan = index + 1, at = offset; scan < lines.length; scan++) {
      if (close.test(lines[scan]!)) {
        closeIndex = scan;
        closeOffset = at;
        break;
      }
      at += lines[scan]!.length + 1;
    }
    const contentEnd = closeIndex === -1 ? text.length : closeOffset;
    const content = text.slice(offset, contentEnd);
    if (!/^(?:\s|<!--[\s\S]*?-->|<\?xml[\s\S]*?\?>)*<directive[\s/>]/.test(content)) {
      if (closeIndex !== -1) {
        offset = closeOffset + lines[closeIndex]!.length + 1;
        index = closeIndex;
      }
      continue;
    }
    if (closeIndex === -1) {
      throw new DirectiveBlockError(
        `the \`\`\`xml block that starts here is never closed; end it with a line of ${fence}`,
        index + 1,
      );
    }
    const element = readXmlDocument(text, offset, contentEnd);
    const afterClose = Math.min(text.length, closeOffset + lines[closeIndex]!.length + 1);
    const body = `${text.slice(0, lineStart).trimEnd()}\n\n${text.slice(afterClose).trimStart()}`;
    return { element, body: body.trim() };
  }
  throw new DirectiveBlockError(
    'no metadata block: put a ```xml fenced block holding <directive name="…" version="…"><metadata>…</metadata></directive> in the file (or start the file with the bare <directive> element)',
    1,
  );
}

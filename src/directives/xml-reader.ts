/**
 * A small XML reader for the metadata block of a directive: elements, attributes, text, comments,
 * CDATA, the five predefined entities and numeric character references. It keeps the line and
 * column of every element and attribute, which a general XML library does not, so an error can
 * point at `<limits max_turns="ten">` on line 4. DTDs, namespaces and processing instructions
 * other than a leading `<?xml …?>` are not supported: the block never needs them.
 */

/** A 1-based line and column in the file being read. */
export interface XmlPosition {
  line: number;
  column: number;
}

/** One attribute of an element, with where its name starts. */
export interface XmlAttribute extends XmlPosition {
  name: string;
  /** The value with entities decoded. */
  value: string;
}

/** A text run (CDATA included) inside an element, entities decoded. */
export interface XmlText extends XmlPosition {
  kind: "text";
  text: string;
}

/** An element, its attributes in document order and its children (comments dropped). */
export interface XmlElement extends XmlPosition {
  kind: "element";
  name: string;
  attributes: XmlAttribute[];
  children: (XmlElement | XmlText)[];
}

/** Text that is not well-formed XML, at `line`/`column` of the file. */
export class XmlSyntaxError extends Error {
  readonly line: number;
  readonly column: number;

  constructor(message: string, position: XmlPosition) {
    super(message);
    this.name = "XmlSyntaxError";
    this.line = position.line;
    this.column = position.column;
  }
}

/** What `readXmlElement` found: the element and the offset just after it. */
export interface XmlReadResult {
  element: XmlElement;
  end: number;
}

const NAME_START = /[A-Za-z_:]/;
const NAME_CHAR = /[A-Za-z0-9_:.-]/;
const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** The text of an element's text children, joined, with surrounding whitespace trimmed. */
export function elementText(element: XmlElement): string {
  return element.children
    .map((child) => (child.kind === "text" ? child.text : ""))
    .join("")
    .trim();
}

/**
 * Reads one element starting at `start` in `text` (leading whitespace, comments and an
 * `<?xml …?>` declaration are skipped). Positions are of `text` itself, so a block taken from a
 * larger file is read in place. Throws `XmlSyntaxError` for text that is not well-formed.
 */
export function readXmlElement(text: string, start = 0): XmlReadResult {
  const reader = new Reader(text, start);
  reader.skipMisc(true);
  if (!text.startsWith("<", reader.at) || !NAME_START.test(text[reader.at + 1] ?? "")) {
    reader.fail('expected an element such as <directive name="…" version="…">');
  }
  const element = reader.element();
  return { element, end: reader.at };
}

/**
 * Reads `text` as one whole XML document: one root element, then only whitespace and comments.
 */
export function readXmlDocument(text: string, start = 0, end = text.length): XmlElement {
  const { element, end: after } = readXmlElement(text.slice(0, end), start);
  const reader = new Reader(text.slice(0, end), after);
  reader.skipMisc(false);
  if (reader.at < end) reader.fail(`unexpected content after </${element.name}>`);
  return element;
}

class Reader {
  readonly text: string;
  at: number;
  private readonly lineStarts: number[];

  constructor(text: string, at: number) {
    this.text = text;
    this.at = at;
    this.lineStarts = [0];
    for (let index = text.indexOf("\n"); index !== -1; index = text.indexOf("\n", index + 1)) {
      this.lineStarts.push(index + 1);
    }
  }

  position(offset = this.at): XmlPosition {
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.lineStarts[middle]! <= offset) low = middle;
      else high = middle - 1;
    }
    return { line: low + 1, column: offset - this.lineStarts[low]! + 1 };
  }

  fail(message: string, offset = this.at): never {
    throw new XmlSyntaxError(message, this.position(offset));
  }

  skipMisc(allowDeclaration: boolean): void {
    for (;;) {
      while (/\s/.test(this.text[this.at] ?? "")) this.at++;
      if (this.text.startsWith("<!--", this.at)) this.comment();
      else if (allowDeclaration && this.text.startsWith("<?xml", this.at)) {
        const close = this.text.indexOf("?>", this.at);
        if (close === -1) this.fail("the <?xml declaration is not closed with ?>");
        this.at = close + 2;
      } else return;
    }
  }

  comment(): void {
    const close = this.text.indexOf("-->", this.at + 4);
    if (close === -1) this.fail("the comment is not closed with -->");
    this.at = close + 3;
  }

  name(what: string): string {
    const begin = this.at;
    if (!NAME_START.test(this.text[this.at] ?? "")) this.fail(`expected ${what}`);
    while (NAME_CHAR.test(this.text[this.at] ?? "")) this.at++;
    return this.text.slice(begin, this.at);
  }

  element(): XmlElement {
    const begin = this.at;
    this.at++;
    const name = this.name("an element name after <");
    const element: XmlElement = {
      kind: "element",
      name,
      attributes: [],
      children: [],
      ...this.position(begin),
    };
    for (;;) {
      const spaced = /\s/.test(this.text[this.at] ?? "");
      while (/\s/.test(this.text[this.at] ?? "")) this.at++;
      if (this.at >= this.text.length) this.fail(`<${name}> is not closed with > or />`, begin);
      if (this.text.startsWith("/>", this.at)) {
        this.at += 2;
        return element;
      }
      if (this.text[this.at] === ">") {
        this.at++;
        break;
      }
      if (!spaced) this.fail(`expected a space, > or /> in <${name}>`);
      element.attributes.push(this.attribute(element));
    }
    this.content(element, begin);
    return element;
  }

  attribute(element: XmlElement): XmlAttribute {
    const position = this.position();
    const name = this.name(`an attribute name, > or /> in <${element.name}>`);
    if (element.attributes.some((attribute) => attribute.name === name)) {
      this.fail(`<${element.name}> has the attribute ${name} twice`, this.at - name.length);
    }
    while (/\s/.test(this.text[this.at] ?? "")) this.at++;
    if (this.text[this.at] !== "=") this.fail(`expected = after ${name} in <${element.name}>`);
    this.at++;
    while (/\s/.test(this.text[this.at] ?? "")) this.at++;
    const quote = this.text[this.at];
    if (quote !== '"' && quote !== "'") {
      this.fail(`the value of ${name} in <${element.name}> must be quoted, e.g. ${name}="…"`);
    }
    const close = this.text.indexOf(quote, this.at + 1);
    if (close === -1) this.fail(`the value of ${name} in <${element.name}> is not closed`);
    const raw = this.text.slice(this.at + 1, close);
    if (raw.includes("<")) this.fail(`the value of ${name} contains <; write &lt;`, this.at + 1);
    this.at = close + 1;
    return { name, value: decodeEntities(raw), ...position };
  }

  content(element: XmlElement, begin: number): void {
    for (;;) {
      const next = this.text.indexOf("<", this.at);
      if (next === -1)
        this.fail(`<${element.name}> is never closed with </${element.name}>`, begin);
      if (next > this.at) this.pushText(element, this.text.slice(this.at, next), this.at);
      this.at = next;
      if (this.text.startsWith("<!--", this.at)) this.comment();
      else if (this.text.startsWith("<![CDATA[", this.at)) {
        const close = this.text.indexOf("]]>", this.at);
        if (close === -1) this.fail("the <![CDATA[ section is not closed with ]]>");
        element.children.push({
          kind: "text",
          text: this.text.slice(this.at + 9, close),
          ...this.position(),
        });
        this.at = close + 3;
      } else if (this.text.startsWith("</", this.at)) {
        const closeAt = this.at;
        this.at += 2;
        const name = this.name("an element name after </");
        while (/\s/.test(this.text[this.at] ?? "")) this.at++;
        if (this.text[this.at] !== ">") this.fail(`expected > to end </${name}`);
        if (name !== element.name) {
          const opened = this.position(begin);
          this.fail(
            `</${name}> does not close <${element.name}> (opened at line ${opened.line}); close it with </${element.name}>`,
            closeAt,
          );
        }
        this.at++;
        return;
      } else if (NAME_START.test(this.text[this.at + 1] ?? "")) {
        element.children.push(this.element());
      } else {
        this.fail(`a < in text must be written &lt;`);
      }
    }
  }

  pushText(element: XmlElement, raw: string, offset: number): void {
    element.children.push({ kind: "text", text: decodeEntities(raw), ...this.position(offset) });
  }
}

/**
 * Decodes the predefined entities and numeric references. Anything else that starts with `&` is
 * kept as written ("R&D" in a description is not worth refusing a file over).
 */
export function decodeEntities(raw: string): string {
  return raw.replace(/&(#x[0-9A-Fa-f]+|#[0-9]+|[A-Za-z]+);/g, (whole, body: string) => {
    if (body.startsWith("#")) {
      const code = body[1] === "x" ? Number.parseInt(body.slice(2), 16) : Number(body.slice(1));
      return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
    }
    return ENTITIES[body] ?? whole;
  });
}

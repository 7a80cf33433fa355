import type { ItemIssue } from "./item-issues.js";
import { PERMISSION_KINDS } from "./permissions.js";
import { elementText, type XmlAttribute, type XmlElement } from "./xml-reader.js";

/** Where a field of the metadata is written: its line and how to name it in a message. */
export interface FieldPlace {
  line: number;
  /** `<limits max_turns="ten">`, `<description>`, `<directive>`. */
  field: string;
}

/**
 * The metadata block as plain strings, before validation, with where each field is. Keys are
 * the snake_case names of the file; `places` is keyed by the dotted path zod reports
 * (`limits.max_turns`, `inputs.0.default`).
 */
export interface RawMetadata {
  data: Record<string, unknown>;
  places: Map<string, FieldPlace>;
  /** Structural problems: unknown elements or attributes, repeats, stray text. */
  issues: ItemIssue[];
}

const METADATA_CHILDREN = [
  "description",
  "category",
  "author",
  "model",
  "limits",
  "permissions",
  "summarizer",
] as const;
const LIMIT_ATTRIBUTES = [
  "max_turns",
  "max_tokens",
  "max_spend",
  "max_wall_seconds",
  "max_spawn_depth",
];
const INPUT_ATTRIBUTES = ["name", "type", "required", "default"];

const tag = (element: XmlElement) => `<${element.name}>`;
const attributeLabel = (element: XmlElement, attribute: XmlAttribute) =>
  `<${element.name} ${attribute.name}=${JSON.stringify(attribute.value)}>`;

/**
 * Walks the `<directive>` element into `RawMetadata`. Never throws: everything that does not fit
 * the format becomes an issue that says what is allowed.
 */
export function readMetadata(root: XmlElement): RawMetadata {
  const reader = new MetadataReader();
  reader.directive(root);
  return { data: reader.data, places: reader.places, issues: reader.issues };
}

class MetadataReader {
  readonly data: Record<string, unknown> = {};
  readonly places = new Map<string, FieldPlace>();
  readonly issues: ItemIssue[] = [];

  issue(line: number, field: string, message: string): void {
    this.issues.push({ line, field, message });
  }

  directive(root: XmlElement): void {
    if (root.name !== "directive") {
      this.issue(root.line, tag(root), "the metadata block must be a <directive> element");
      return;
    }
    this.attributes(root, ["name", "version"], this.data, "");
    this.places.set("", { line: root.line, field: "<directive>" });
    const sections = this.children(
      root,
      ["metadata", "inputs"],
      "<directive> holds <metadata> and <inputs>; write instructions in markdown outside the block",
    );
    const metadata = sections.find((section) => section.name === "metadata");
    if (!metadata) {
      this.issue(
        root.line,
        "<directive>",
        "<metadata> is missing; add <metadata>…</metadata> inside it",
      );
    } else {
      this.places.set("description", { line: metadata.line, field: "<metadata>" });
      this.attributes(metadata, [], {}, "metadata");
      const what = `<metadata> holds ${METADATA_CHILDREN.map((name) => `<${name}>`).join(", ")}`;
      for (const child of this.children(metadata, METADATA_CHILDREN, what))
        this.metadataChild(child);
    }
    const inputs = sections.find((section) => section.name === "inputs");
    if (inputs) this.inputs(inputs);
  }

  attributes(
    element: XmlElement,
    allowed: readonly string[],
    into: Record<string, unknown>,
    path: string,
  ): void {
    if (path) this.places.set(path, { line: element.line, field: tag(element) });
    for (const attribute of element.attributes) {
      if (!allowed.includes(attribute.name)) {
        const list = allowed.length ? `it takes ${allowed.join(", ")}` : "it takes none";
        this.issue(
          attribute.line,
          attributeLabel(element, attribute),
          `unknown attribute ${attribute.name}; ${list}`,
        );
        continue;
      }
      into[attribute.name] = attribute.value;
      this.places.set(`${path ? `${path}.` : ""}${attribute.name}`, {
        line: attribute.line,
        field: attributeLabel(element, attribute),
      });
    }
  }

  onlyText(element: XmlElement): void {
    for (const child of element.children) {
      if (child.kind === "element") {
        this.issue(child.line, tag(child), `${tag(element)} holds text only, not elements`);
      }
    }
    const first = element.attributes[0];
    if (first) {
      this.issue(first.line, attributeLabel(element, first), `${tag(element)} takes no attributes`);
    }
  }

  noChildren(element: XmlElement): void {
    const child = element.children.find(
      (child) => child.kind === "element" || child.text.trim() !== "",
    );
    if (child) {
      this.issue(
        child.line,
        tag(element),
        `${tag(element)} takes attributes only; write it as <${element.name} … />`,
      );
    }
  }

  children(element: XmlElement, allowed: readonly string[], what: string): XmlElement[] {
    const seen = new Set<string>();
    const result: XmlElement[] = [];
    for (const child of element.children) {
      if (child.kind === "text") {
        if (child.text.trim() !== "") {
          this.issue(child.line, tag(element), `stray text inside ${tag(element)}; ${what}`);
        }
        continue;
      }
      if (!allowed.includes(child.name)) {
        this.issue(child.line, tag(child), `unknown element in ${tag(element)}; ${what}`);
        continue;
      }
      if (seen.has(child.name)) {
        this.issue(
          child.line,
          tag(child),
          `${tag(child)} appears twice in ${tag(element)}; keep one`,
        );
        continue;
      }
      seen.add(child.name);
      result.push(child);
    }
    return result;
  }

  metadataChild(child: XmlElement): void {
    switch (child.name) {
      case "description":
      case "category":
      case "author":
        this.onlyText(child);
        this.data[child.name] = elementText(child);
        this.places.set(child.name, { line: child.line, field: tag(child) });
        return;
      case "model":
      case "limits":
      case "summarizer": {
        const allowed =
          child.name === "model"
            ? ["tier", "id"]
            : child.name === "limits"
              ? LIMIT_ATTRIBUTES
              : ["directive"];
        const values: Record<string, unknown> = {};
        this.attributes(child, allowed, values, child.name);
        this.noChildren(child);
        this.data[child.name] = values;
        return;
      }
      case "permissions":
        this.permissions(child);
        return;
    }
  }

  permissions(element: XmlElement): void {
    this.attributes(element, [], {}, "permissions");
    const granted: Record<string, string[]> = {};
    for (const kind of PERMISSION_KINDS) granted[kind] = [];
    const kinds = PERMISSION_KINDS.map((kind) => `<${kind}>`).join(", ");
    for (const execute of this.children(element, ["execute"], "<permissions> holds <execute>")) {
      this.attributes(execute, [], {}, "permissions.execute");
      for (const entry of execute.children) {
        if (entry.kind === "text") {
          if (entry.text.trim() !== "") {
            this.issue(entry.line, "<execute>", `stray text; <execute> holds ${kinds} elements`);
          }
          continue;
        }
        const list = granted[entry.name];
        if (!list) {
          this.issue(entry.line, tag(entry), `unknown permission kind; <execute> holds ${kinds}`);
          continue;
        }
        this.onlyText(entry);
        this.places.set(`permissions.${entry.name}.${list.length}`, {
          line: entry.line,
          field: tag(entry),
        });
        list.push(elementText(entry));
      }
    }
    this.data.permissions = granted;
  }

  inputs(element: XmlElement): void {
    this.attributes(element, [], {}, "inputs");
    const list: Record<string, unknown>[] = [];
    const what = '<inputs> holds <input name="…" type="…">description</input> elements';
    for (const child of element.children) {
      if (child.kind === "text") {
        if (child.text.trim() !== "") this.issue(child.line, "<inputs>", `stray text; ${what}`);
        continue;
      }
      if (child.name !== "input") {
        this.issue(child.line, tag(child), `unknown element in <inputs>; ${what}`);
        continue;
      }
      const entry: Record<string, unknown> = { description: elementText(child) };
      this.attributes(child, INPUT_ATTRIBUTES, entry, `inputs.${list.length}`);
      const nested = child.children.find((node) => node.kind === "element");
      if (nested)
        this.issue(nested.line, tag(nested), "<input> holds its description as text only");
      list.push(entry);
    }
    this.data.inputs = list;
  }
}

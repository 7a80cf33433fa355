import { type Document, LineCounter, parseDocument } from "yaml";
import { describeError } from "../spec/index.js";
import { type ItemConfigErrorCode, itemConfigError } from "./item-issues.js";

/** A YAML item file parsed with positions: the document, its line counter and its plain data. */
export interface YamlItem {
  document: Document;
  counter: LineCounter;
  data: unknown;
}

/**
 * Parses YAML `text` of the item `file`, keeping positions for messages. Throws the item's
 * `ConfigError` (`code`) with the line and column of the first syntax error, or when the data
 * cannot be built (too many aliases).
 */
export function readYamlItem(
  text: string,
  file: string,
  code: ItemConfigErrorCode,
  hint: string,
): YamlItem {
  const counter = new LineCounter();
  const document = parseDocument(text, { lineCounter: counter, prettyErrors: false });
  const syntax = document.errors[0];
  if (syntax) {
    const { line, col } = counter.linePos(syntax.pos[0]);
    throw itemConfigError(
      code,
      file,
      [{ line, field: "YAML", message: `${syntax.message} (column ${col})` }],
      `Fix the YAML at that position. ${hint}`,
    );
  }
  try {
    return { document, counter, data: document.toJS({ maxAliasCount: 1000 }) };
  } catch (error) {
    throw itemConfigError(
      code,
      file,
      [{ field: "YAML", message: `cannot be read: ${describeError(error)}` }],
      "Simplify the YAML (fewer aliases)",
    );
  }
}

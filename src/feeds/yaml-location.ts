import { type Document, isMap, isNode, isScalar, isSeq, type LineCounter } from "yaml";

/** A 1-based line and column in a YAML text. */
export interface TextPosition {
  line: number;
  column: number;
}

/**
 * Where `path` is in `document`: the node it names, or, where the path goes further than the
 * document does (a missing field), the deepest node on the way. `undefined` when not even the
 * root has a position.
 */
export function locateYamlPath(
  document: Document,
  counter: LineCounter,
  path: readonly (string | number)[],
): TextPosition | undefined {
  let node: unknown = document.contents;
  let offset = isNode(node) ? node.range?.[0] : undefined;
  for (const part of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) =>
        isScalar(item.key) ? item.key.value === part : item.key === part,
      );
      if (!pair) break;
      const keyOffset = isNode(pair.key) ? pair.key.range?.[0] : undefined;
      if (isNode(pair.value) && pair.value.range) {
        node = pair.value;
        offset = pair.value.range[0];
      } else {
        offset = keyOffset ?? offset;
        break;
      }
    } else if (isSeq(node) && typeof part === "number") {
      const item = node.items[part];
      if (!isNode(item) || !item.range) break;
      node = item;
      offset = item.range[0];
    } else {
      break;
    }
  }
  if (offset === undefined) return undefined;
  const position = counter.linePos(offset);
  return { line: position.line, column: position.col };
}

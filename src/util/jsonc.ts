/**
 * Hand-edited configuration files read as plain data through jsonc-parser's
 * parse tree: duplicate keys, reserved keys and excess depth are refused
 * rather than resolved, because a file a person edits should fail loudly, not
 * be half understood. Used for `settings.jsonc` (JSONC) and
 * `credentials.json` (strict JSON).
 *
 * @module
 */

// jsonc-parser has no `exports` map and its `lib/esm` build uses extensionless
// specifiers, which neither Node nor Deno can load. The bare specifier resolves
// to the UMD `main`, whose `exports.x = …` assignments both runtimes' CommonJS
// interop expose as named ESM exports, so this form works unchanged on both.
import { type Node, type ParseError, parseTree } from "jsonc-parser";

// valibot's record/rest silently skips these keys, and a literal "__proto__"
// assignment would swap the prototype; rejecting them keeps every key visible.
const RESERVED_KEYS = new Set(["__proto__", "prototype", "constructor"]);
// The deepest valid configuration value is 4 containers down; anything far deeper is invalid anyway.
const MAX_DEPTH = 8;

/** Which dialect to accept. */
export interface ConfigTextOptions {
  /** Comments and trailing commas allowed (JSONC), else strict JSON. */
  readonly jsonc: boolean;
}

/**
 * Parses `text` to plain data: the value, `undefined` for an empty (or, in
 * JSONC, comment-only) text, or `null` for a syntax error, a top level that
 * is not an object, a duplicate or reserved key, or nesting past the bound.
 * Never throws.
 */
export function parseConfigText(text: string, options: ConfigTextOptions): Record<string, unknown> | undefined | null {
  const errors: ParseError[] = [];
  let root: Node | undefined;
  try {
    root = parseTree(text, errors, { allowTrailingComma: options.jsonc, disallowComments: !options.jsonc, allowEmptyContent: true });
  } catch {
    // The parser recurses per nesting level, so pathological nesting ends in a RangeError.
    return null;
  }
  if (errors.length > 0) return null;
  if (root === undefined) return undefined;
  if (root.type !== "object") return null;
  return (treeToValue(root, 0) as Record<string, unknown> | undefined) ?? null;
}

/** A parse tree as plain data, or `undefined` on a duplicate or reserved key or excess depth. */
function treeToValue(node: Node, depth: number): unknown {
  if (node.type === "object" || node.type === "array") {
    if (depth >= MAX_DEPTH) return undefined;
    const children = node.children ?? [];
    const items = node.type === "array" ? children.map((child) => treeToValue(child, depth + 1)) : null;
    if (items !== null) return items.includes(undefined) ? undefined : items;
    const out: Record<string, unknown> = {};
    for (const property of children) {
      const [keyNode, valueNode] = property.children ?? [];
      const key: unknown = keyNode?.value;
      // Duplicates are ambiguous in a hand-edited file; last-wins would hide a mistake.
      if (typeof key !== "string" || valueNode === undefined || RESERVED_KEYS.has(key) || Object.hasOwn(out, key)) {
        return undefined;
      }
      const value = treeToValue(valueNode, depth + 1);
      if (value === undefined) return undefined;
      out[key] = value;
    }
    return out;
  }
  return node.value;
}

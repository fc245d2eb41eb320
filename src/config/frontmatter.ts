/**
 * YAML frontmatter of the Markdown files a user or a repository writes to
 * shape the agent: Agent Skills' `SKILL.md` and agent profiles. The text
 * between a first line `---` and the next line `---` is YAML; the rest is the
 * body. Parsed with the `yaml` package (eemeli/yaml: no dependencies, YAML 1.2
 * complete, maintained, and the parser the Agent Skills reference tools and
 * most of the ecosystem use) rather than by hand, in its strictest form:
 * the core schema only (no custom tags, no `!!binary`/timestamps), duplicate
 * keys refused, a tiny alias budget so a repository cannot hand us a "billion
 * laughs" expansion, and plain JSON data out. Problems are data, never
 * exceptions, and never echo the file's text: a caller reports the file and
 * the code.
 *
 * Loaded only by the readers of skills and profiles, and those only when a
 * skill or profile file exists, so a child without any never parses `yaml`.
 *
 * @module
 */

import { parseDocument } from "yaml";

/** Bytes of frontmatter (between the fences) a file may carry. */
export const FRONTMATTER_MAX_BYTES = 16_384;
/** Containers a frontmatter value may nest: a mapping of lists of mappings is plenty. */
export const FRONTMATTER_MAX_DEPTH = 8;
// Aliases cost nothing to write and multiply what a parse builds; frontmatter has no use for many.
const MAX_ALIASES = 8;

/** Why a file's frontmatter was refused. */
export type FrontmatterProblem =
  /** The file does not start with a `---` line. */
  | "frontmatter_missing"
  /** No closing `---` line. */
  | "frontmatter_unterminated"
  /** More than {@link FRONTMATTER_MAX_BYTES} between the fences. */
  | "frontmatter_too_large"
  /** Not YAML, a duplicate key, a tag, too many aliases, or too deep. */
  | "frontmatter_invalid"
  /** Valid YAML whose top level is not a mapping. */
  | "frontmatter_not_mapping";

/** A split and parsed Markdown file. */
export type FrontmatterResult =
  | { readonly ok: true; readonly data: Readonly<Record<string, unknown>>; readonly body: string }
  | { readonly ok: false; readonly code: FrontmatterProblem };

const encoder = new TextEncoder();
// The fences: `---` alone on a line, an optional CR before the LF (files edited on Windows).
const OPENING = /^---\r?\n/;
const CLOSING = /^---[ \t]*\r?$/m;

/**
 * Splits `text` (a whole file, already decoded as UTF-8) into its
 * frontmatter mapping and Markdown body (leading blank lines of the body
 * kept as written: the caller decides what to trim).
 */
export function parseFrontmatter(text: string): FrontmatterResult {
  const start = text.startsWith("\uFEFF") ? 1 : 0;
  const opening = OPENING.exec(text.slice(start));
  if (opening === null) return { ok: false, code: "frontmatter_missing" };
  const rest = text.slice(start + opening[0].length);
  const closing = CLOSING.exec(rest);
  if (closing === null) return { ok: false, code: "frontmatter_unterminated" };
  const yamlText = rest.slice(0, closing.index);
  if (encoder.encode(yamlText).length > FRONTMATTER_MAX_BYTES) return { ok: false, code: "frontmatter_too_large" };
  const afterFence = rest.slice(closing.index).replace(/^---[ \t]*\r?(\n|$)/, "");
  const data = parseYamlMapping(yamlText);
  return data.ok ? { ok: true, data: data.value, body: afterFence } : data;
}

function parseYamlMapping(
  yamlText: string,
): { readonly ok: true; readonly value: Readonly<Record<string, unknown>> } | { readonly ok: false; readonly code: FrontmatterProblem } {
  if (yamlText.trim() === "") return { ok: true, value: {} };
  let value: unknown;
  try {
    const document = parseDocument(yamlText, { schema: "core", uniqueKeys: true, customTags: [], prettyErrors: false });
    // A warning is an unresolved tag or the like: the file does not mean what it seems to.
    if (document.errors.length > 0 || document.warnings.length > 0) return { ok: false, code: "frontmatter_invalid" };
    // Maps stay Maps: stringifying a collection key makes `yaml` emit a process warning (stderr during serving).
    value = document.toJS({ maxAliasCount: MAX_ALIASES, mapAsMap: true });
  } catch {
    // toJS throws on an alias budget overrun; parseDocument itself reports through `errors`.
    return { ok: false, code: "frontmatter_invalid" };
  }
  if (!(value instanceof Map)) return { ok: false, code: "frontmatter_not_mapping" };
  const data = plain(value, FRONTMATTER_MAX_DEPTH);
  return data === INVALID ? { ok: false, code: "frontmatter_invalid" } : { ok: true, value: data as Record<string, unknown> };
}

const INVALID = Symbol("invalid");
const RESERVED_KEYS = new Set(["__proto__", "prototype", "constructor"]);

// JSON's data model only: string keys, finite numbers, no binaries (`!!binary` resolves even under the
// core schema), within the depth bound, and none of the keys that would reach an object's prototype
// (refused, as in settings files, rather than silently skipped).
function plain(value: unknown, depth: number): unknown {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : INVALID;
  if (depth === 0) return INVALID;
  if (Array.isArray(value)) {
    const items = value.map((item) => plain(item, depth - 1));
    return items.includes(INVALID) ? INVALID : items;
  }
  if (!(value instanceof Map)) return INVALID;
  const out: Record<string, unknown> = {};
  for (const [key, item] of value) {
    const converted = plain(item, depth - 1);
    if (typeof key !== "string" || RESERVED_KEYS.has(key) || converted === INVALID) return INVALID;
    out[key] = converted;
  }
  return out;
}

/**
 * Every problem of one `settings.jsonc` text, each with the JSON path where
 * it is, for `magi-code config check`. Startup only needs to know *that* a
 * file is invalid (the wire carries `configuration_invalid` and nothing
 * more); a person fixing the file needs *where*, and the parse tree and the
 * valibot issues already know. Messages are built from the schema's
 * expectations and never from the offending value, which may be a key
 * pasted into the wrong field.
 *
 * @module
 */

import { getLocation, type Node, type ParseError, parseTree, printParseErrorCode } from "jsonc-parser";
import * as v from "valibot";
import { CompleteSettingsSchema } from "../config/mcp-settings.ts";
import { jsonPath } from "../util/json-path.ts";

/** One problem in one file. */
export interface Problem {
  /** JSON path, `$` for the whole file: `$.model.provider`, `$.providers.endpoints["my llm"].base_url`. */
  readonly path: string;
  /** What is wrong, in words that never quote the value. */
  readonly message: string;
}

// The same bounds the startup reader enforces (src/util/jsonc.ts).
const RESERVED_KEYS = new Set(["__proto__", "prototype", "constructor"]);
const MAX_DEPTH = 8;

function lineAndColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

/** Duplicate and reserved keys and excess nesting, which the startup reader refuses. */
function structureProblems(node: Node, segments: (string | number)[], out: Problem[]): void {
  if (segments.length >= MAX_DEPTH && (node.type === "object" || node.type === "array")) {
    out.push({ path: jsonPath(segments), message: `nested deeper than ${MAX_DEPTH} levels` });
    return;
  }
  if (node.type === "array") (node.children ?? []).forEach((child, index) => structureProblems(child, [...segments, index], out));
  if (node.type !== "object") return;
  const seen = new Set<string>();
  for (const property of node.children ?? []) {
    const [keyNode, valueNode] = property.children ?? [];
    const key = String(keyNode?.value);
    const path = [...segments, key];
    if (RESERVED_KEYS.has(key)) out.push({ path: jsonPath(path), message: "reserved key" });
    else if (seen.has(key)) out.push({ path: jsonPath(path), message: "duplicate key (a hand-edited file must say it once)" });
    seen.add(key);
    if (valueNode !== undefined) structureProblems(valueNode, path, out);
  }
}

/** What the schema wants where a value-dependent check failed, by the last path segment. */
const CHECK_TEXT: Readonly<Record<string, string>> = {
  base_url: "must be an absolute http(s) URL without credentials, query or fragment",
  model: "must be 1-256 UTF-8 bytes without control characters",
  endpoints: "provider names must be 1-64 of [A-Za-z0-9._-]",
  url: "must be an absolute http(s) URL without credentials or fragment",
};

function issueMessage(issue: v.BaseIssue<unknown>, last: string | number | undefined): string {
  if (issue.type === "strict_object" && issue.expected === "never") return "unknown key";
  if (issue.kind === "schema") {
    if (issue.type === "custom") return "must be an object, not an array";
    return `must be ${issue.expected ?? issue.type}`;
  }
  if (issue.type === "check" || issue.type === "custom") return (typeof last === "string" ? CHECK_TEXT[last] : undefined) ?? "is not valid here";
  if (issue.type === "regex") return `must match ${issue.expected}`;
  return `${issue.type.replace(/_/g, " ")}: must be ${issue.expected}`;
}

/** Every problem of `text`, in file order; empty when startup would accept it. */
export function settingsProblems(text: string): Problem[] {
  const errors: ParseError[] = [];
  let root: Node | undefined;
  try {
    root = parseTree(text, errors, { allowTrailingComma: true, disallowComments: false, allowEmptyContent: true });
  } catch {
    return [{ path: "$", message: "nested far too deeply to parse" }];
  }
  if (errors.length > 0) {
    // Only the first: the parser recovers and goes on, so later syntax errors are mostly echoes of it.
    const first = errors[0]!;
    const location = getLocation(text, first.offset);
    const segments = location.isAtPropertyKey ? location.path.slice(0, -1) : location.path;
    return [{ path: jsonPath(segments), message: `syntax error: ${printParseErrorCode(first.error)} at ${lineAndColumn(text, first.offset)}` }];
  }
  if (root === undefined) return [];
  if (root.type !== "object") return [{ path: "$", message: "the top level must be an object" }];
  const out: Problem[] = [];
  structureProblems(root, [], out);
  if (out.length > 0) return out;
  const parsed = v.safeParse(CompleteSettingsSchema, nodeValue(root), { abortEarly: false });
  if (parsed.success) return [];
  for (const issue of parsed.issues) {
    const segments = (issue.path ?? []).map((item) => item.key as string | number);
    out.push({ path: jsonPath(segments), message: issueMessage(issue, segments.at(-1)) });
  }
  return out;
}

/** The tree as plain data (keys are known unique and unreserved by now). */
function nodeValue(node: Node): unknown {
  if (node.type === "array") return (node.children ?? []).map(nodeValue);
  if (node.type !== "object") return node.value;
  const out: Record<string, unknown> = {};
  for (const property of node.children ?? []) {
    const [keyNode, valueNode] = property.children ?? [];
    if (keyNode !== undefined && valueNode !== undefined) out[String(keyNode.value)] = nodeValue(valueNode);
  }
  return out;
}

/**
 * A small glob matcher for workspace-relative patterns: `*` (any run within
 * one path component), `?` (one character), `[...]` classes (`[!...]` or
 * `[^...]` negated, ranges), `**` as a whole component (zero or more
 * components), `{a,b}` alternatives and `\` escapes. Wildcards match names
 * starting with a dot too: models expect `**\/*.ts` to find `.github/x.ts`.
 *
 * Matching is incremental so a directory walk can prune: the state after a
 * directory's name says whether anything below it can still match. Each
 * component is matched by the two-pointer wildcard algorithm, O(name ×
 * pattern) with no backtracking blow-up, so hostile patterns such as
 * `*a*a*a*a*b` stay cheap, and `**` runs as a set of positions (an NFA)
 * rather than by recursion. Written here rather than taken from a package
 * because the walk needs that prune step, which matchers exposing only
 * `match(path)` lack, and the whole thing is this file.
 *
 * @module
 */

type CharTest =
  | { readonly kind: "char"; readonly code: number }
  | { readonly kind: "any" }
  | { readonly kind: "class"; readonly negated: boolean; readonly ranges: readonly (readonly [number, number])[] };
type Token = CharTest | { readonly kind: "star" };
type Segment = { readonly kind: "globstar" } | { readonly kind: "name"; readonly tokens: readonly Token[] };

/** Longest accepted pattern, in characters. */
export const MAX_GLOB_LENGTH = 1024;

/** Most alternatives `{a,b}` groups may expand to. */
export const MAX_GLOB_ALTERNATIVES = 64;

/** Positions reached in the pattern alternatives, encoded `alternative * 65536 + segment`. */
export type GlobState = readonly number[];

/** The result of {@link compileGlob}. */
export type GlobCompilation = { readonly ok: true; readonly matcher: GlobMatcher } | { readonly ok: false; readonly reason: string };

/** Splits `{a,b}` groups into separate patterns; false once more than `limit` come out. */
function expandBraces(pattern: string, out: string[], limit: number): boolean {
  for (let open = 0; open < pattern.length; open++) {
    if (pattern[open] === "\\") {
      open++;
      continue;
    }
    if (pattern[open] !== "{") continue;
    let depth = 0;
    const commas: number[] = [];
    let close = -1;
    for (let index = open; index < pattern.length && close === -1; index++) {
      const char = pattern[index];
      if (char === "\\") index++;
      else if (char === "{") depth++;
      else if (char === "}" && --depth === 0) close = index;
      else if (char === "," && depth === 1) commas.push(index);
    }
    // Like a shell, `{x}` and an unclosed `{` are literal text.
    if (close === -1 || commas.length === 0) continue;
    const bounds = [open, ...commas, close];
    for (let part = 0; part + 1 < bounds.length; part++) {
      const choice = pattern.slice(bounds[part]! + 1, bounds[part + 1]);
      if (!expandBraces(pattern.slice(0, open) + choice + pattern.slice(close + 1), out, limit)) return false;
    }
    return true;
  }
  out.push(pattern);
  return out.length <= limit;
}

/** The code point at `chars[index]` (after a backslash escape) and the last index it used. */
function classChar(chars: readonly string[], index: number): [number, number] {
  if (chars[index] === "\\" && index + 1 < chars.length) return [chars[index + 1]!.codePointAt(0)!, index + 1];
  return [chars[index]!.codePointAt(0)!, index];
}

/** Parses a `[...]` class whose `[` is at `chars[start]`; null when it never closes (then `[` is literal). */
function parseClass(chars: readonly string[], start: number): { test: CharTest; end: number } | null {
  let index = start + 1;
  const negated = chars[index] === "!" || chars[index] === "^";
  if (negated) index++;
  const ranges: [number, number][] = [];
  // A `]` right after the opening (or its negation) is a member, as in POSIX.
  for (let first = true; index < chars.length; index++, first = false) {
    if (chars[index] === "]" && !first) return { test: { kind: "class", negated, ranges }, end: index };
    const [low, lowEnd] = classChar(chars, index);
    let high = low;
    index = lowEnd;
    if (chars[index + 1] === "-" && index + 2 < chars.length && chars[index + 2] !== "]") {
      [high, index] = classChar(chars, index + 2);
    }
    ranges.push([low, high]);
  }
  return null;
}

/** Tokenises one path component of a pattern. */
function parseSegment(text: string): Segment {
  if (text === "**") return { kind: "globstar" };
  const chars = Array.from(text);
  const tokens: Token[] = [];
  for (let index = 0; index < chars.length; index++) {
    const char = chars[index]!;
    if (char === "*") {
      if (tokens[tokens.length - 1]?.kind !== "star") tokens.push({ kind: "star" });
    } else if (char === "?") {
      tokens.push({ kind: "any" });
    } else if (char === "[") {
      const parsed = parseClass(chars, index);
      if (parsed === null) tokens.push({ kind: "char", code: 0x5b });
      else {
        tokens.push(parsed.test);
        index = parsed.end;
      }
    } else {
      const literal = char === "\\" && index + 1 < chars.length ? chars[++index]! : char;
      tokens.push({ kind: "char", code: literal.codePointAt(0)! });
    }
  }
  return { kind: "name", tokens };
}

function accepts(test: CharTest, code: number): boolean {
  if (test.kind === "char") return test.code === code;
  if (test.kind === "any") return true;
  return test.ranges.some(([low, high]) => code >= low && code <= high) !== test.negated;
}

/** Two-pointer wildcard match: on a mismatch, retry from the last `*` one character further. */
function matchTokens(tokens: readonly Token[], name: readonly number[]): boolean {
  let token = 0;
  let at = 0;
  let starToken = -1;
  let starAt = 0;
  while (at < name.length) {
    const current = tokens[token];
    if (current !== undefined && current.kind !== "star" && accepts(current, name[at]!)) {
      token++;
      at++;
    } else if (current?.kind === "star") {
      starToken = token++;
      starAt = at;
    } else if (starToken !== -1) {
      token = starToken + 1;
      at = ++starAt;
    } else {
      return false;
    }
  }
  while (tokens[token]?.kind === "star") token++;
  return token === tokens.length;
}

/** A compiled pattern (all its brace alternatives), matched one path component at a time. */
export class GlobMatcher {
  readonly #alternatives: readonly (readonly Segment[])[];

  /** Use {@link compileGlob}. */
  constructor(alternatives: readonly (readonly Segment[])[]) {
    this.#alternatives = alternatives;
  }

  #close(alternative: number, position: number, into: Set<number>): void {
    const segments = this.#alternatives[alternative]!;
    for (let at = position; at <= segments.length; at++) {
      into.add(alternative * 65536 + at);
      if (segments[at]?.kind !== "globstar") return;
    }
  }

  /** The state before any component. */
  start(): GlobState {
    const state = new Set<number>();
    this.#alternatives.forEach((_, alternative) => this.#close(alternative, 0, state));
    return [...state];
  }

  /** The state after consuming the component `name`. */
  step(state: GlobState, name: string): GlobState {
    const next = new Set<number>();
    let codes: number[] | null = null;
    for (const encoded of state) {
      const alternative = Math.floor(encoded / 65536);
      const position = encoded % 65536;
      const segment = this.#alternatives[alternative]![position];
      if (segment === undefined) continue;
      if (segment.kind === "globstar") this.#close(alternative, position, next);
      else if (matchTokens(segment.tokens, codes ??= Array.from(name, (char) => char.codePointAt(0)!))) {
        this.#close(alternative, position + 1, next);
      }
    }
    return [...next];
  }

  /** Whether the components consumed so far form a match. */
  matches(state: GlobState): boolean {
    return state.some((encoded) => encoded % 65536 === this.#alternatives[Math.floor(encoded / 65536)]!.length);
  }

  /** Whether some longer path could still match: the walk descends only then. */
  viable(state: GlobState): boolean {
    return state.some((encoded) => encoded % 65536 < this.#alternatives[Math.floor(encoded / 65536)]!.length);
  }

  /** Matches a whole relative path (`a/b/c.ts`). */
  matchPath(path: string): boolean {
    let state = this.start();
    for (const part of path.split("/")) if (part !== "") state = this.step(state, part);
    return this.matches(state);
  }
}

/**
 * Compiles `pattern`, relative to the directory it is applied in. With
 * `anyDepth`, a pattern without `/` matches the file name at any depth
 * (`*.ts` as `**\/*.ts`), as grep's file filter wants.
 */
export function compileGlob(pattern: string, options: { readonly anyDepth?: boolean } = {}): GlobCompilation {
  if (pattern.length === 0 || pattern.length > MAX_GLOB_LENGTH || pattern.includes("\0")) {
    return { ok: false, reason: `the pattern must be 1 to ${MAX_GLOB_LENGTH} characters` };
  }
  if (pattern.startsWith("/")) return { ok: false, reason: "the pattern must be relative (no leading /)" };
  const expanded: string[] = [];
  if (!expandBraces(pattern, expanded, MAX_GLOB_ALTERNATIVES)) {
    return { ok: false, reason: `the pattern expands to more than ${MAX_GLOB_ALTERNATIVES} alternatives` };
  }
  const alternatives: Segment[][] = [];
  for (const text of expanded) {
    const parts = text.split("/").filter((part) => part !== "" && part !== ".");
    if (parts.includes("..")) return { ok: false, reason: "the pattern may not contain .. components" };
    if (parts.length === 0) return { ok: false, reason: "the pattern names no file" };
    if (options.anyDepth === true && !text.includes("/")) parts.unshift("**");
    alternatives.push(parts.map(parseSegment));
  }
  return { ok: true, matcher: new GlobMatcher(alternatives) };
}

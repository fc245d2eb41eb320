/**
 * Reading a Claude model id as family and version. Two places must agree on
 * it: the Anthropic request builder (which thinking shape to send) and the
 * effort policy table (which efforts a model permits), so it lives here, below
 * both. The id rules and their sources are in docs/decisions/provider-library.md.
 *
 * @module
 */

/** A Claude model id read as family and version: `claude-opus-4-6-20260101` is opus 4.6. */
export interface ClaudeModel {
  /** Lower-case family name, such as `opus`, `sonnet` or `haiku`. */
  readonly family: string;
  /** Major version: 4 in `claude-opus-4-6`. */
  readonly major: number;
  /** Minor version; 0 when the id names only a major version (`claude-haiku-5`). */
  readonly minor: number;
}

// Gateway prefixes (`anthropic.`, `us.anthropic.`, `anthropic/`) before
// `claude-`. The minor is one or two digits, so an 8-digit snapshot date is
// not read as one, and a 1-2 digit group that cannot be the minor (as in
// `claude-opus-4-6x`) makes the id unknown instead of version 4.0. The tail
// takes snapshots and platform suffixes (`-20260215`, `-latest`, `-v1:0`,
// `@20260101`). Current ids put the family first, ids before Claude 4 put
// the version first (`claude-3-7-sonnet-latest`).
const PREFIX = String.raw`^(?:[a-z0-9_-]+[./])*claude-`;
const VERSION = String.raw`(\d+)(?:[-.](\d{1,2})(?!\d)|(?![-.]\d{1,2}(?!\d)))`;
const TAIL = String.raw`(?:[-@][a-z0-9][a-z0-9.:_-]*)?$`;
const FAMILY_FIRST = new RegExp(`${PREFIX}([a-z]+)-${VERSION}${TAIL}`, "i");
const VERSION_FIRST = new RegExp(`${PREFIX}${VERSION}-([a-z]+)${TAIL}`, "i");

/**
 * Reads family and version from a Claude model id, or `null` when the id has
 * no recognisable `claude-<family>-<major>[-<minor>]` (or older
 * `claude-<major>[-<minor>]-<family>`) shape.
 */
export function parseClaudeModel(model: string): ClaudeModel | null {
  const current = FAMILY_FIRST.exec(model);
  if (current !== null) return version(current[1]!, current[2]!, current[3]);
  const legacy = VERSION_FIRST.exec(model);
  return legacy === null ? null : version(legacy[3]!, legacy[1]!, legacy[2]);
}

function version(family: string, major: string, minor: string | undefined): ClaudeModel {
  return { family: family.toLowerCase(), major: Number(major), minor: minor === undefined ? 0 : Number(minor) };
}

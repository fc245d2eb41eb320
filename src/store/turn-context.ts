/**
 * What a turn was set up with, recorded on its `turn_started` record as the
 * `context` field (`docs/storage.md#what-a-turn-was-set-up-with`): a digest
 * of the system prompt its requests carried and which files went into it,
 * each with the SHA-256 and length of the bytes used, never their text (the
 * text is in the files, and repeating it would bloat every history).
 *
 * One object carries every part, so a history answers "what did this turn
 * see" in one place: `instructions` (the `AGENTS.md` chain and
 * `instructions.paths`), `skills` (the skills the system prompt lists: their
 * names and descriptions are what it used, and `system_sha256` covers them)
 * and `profile` (the agent profile the turn ran as, with its files).
 *
 * Nothing a reader derives from a history (replay, entries, listing,
 * selection) depends on it, so an older release may ignore the field, and
 * this one ignores keys of it that a later writer adds. The record keeps
 * within the nested line bound: {@link boundTurnContext} drops entries from
 * the longest list until the field, once the runner adds `system_sha256`,
 * fits {@link TURN_CONTEXT_BYTES}, counting them in `omitted`;
 * `system_sha256` still covers everything.
 *
 * @module
 */

import * as v from "valibot";
import { CountSchema, stringWhere, TextSchema } from "./record-field-schemas.ts";

/**
 * The most UTF-8 bytes the encoded `context` field may take: the nested line
 * bound (65,536) less room for the rest of a `turn_started` line (its ids are
 * at most 1,024 bytes each, 2,048 once escaped), so the record always fits.
 */
export const TURN_CONTEXT_BYTES = 57_344;

const Sha256Schema = stringWhere((text) => /^[0-9a-f]{64}$/.test(text), "Invalid SHA-256");

/**
 * One file a turn's system prompt used: the path it was read at (absolute;
 * a symlink's own path, not its target), the SHA-256 of the bytes used and
 * how many there were (the whole file unless it was cut at a bound: then
 * `head -c <bytes> <path> | sha256sum` gives the digest). Keys a later
 * writer adds are dropped on read.
 */
const FileDigestSchema = v.object({
  path: TextSchema,
  sha256: Sha256Schema,
  bytes: CountSchema,
});

/** One skill the system prompt listed: its name and the canonical path of its `SKILL.md`. */
const SkillEntrySchema = v.object({ name: TextSchema, path: TextSchema });

/** The `context` field's schema; keys a later writer adds are dropped on read. */
export const TurnContextSchema = v.object({
  /** SHA-256 of the system prompt's UTF-8, exactly as every request of the turn carried it. */
  system_sha256: Sha256Schema,
  /** The instructions files, in prompt order (global, project root → cwd, `instructions.paths`). */
  instructions: v.array(FileDigestSchema),
  /** The skills the system prompt listed, in prompt order; absent when it listed none. */
  skills: v.exactOptional(v.array(SkillEntrySchema)),
  /**
   * The agent profile the turn ran as and the files it was read from, in
   * layering order (absent for a built-in; `system_sha256` covers the body).
   */
  profile: v.exactOptional(v.object({
    name: TextSchema,
    files: v.exactOptional(v.array(FileDigestSchema)),
  })),
  /** List entries left out to keep the record within its bound; absent when none were. */
  omitted: v.exactOptional(CountSchema),
});

/** The `context` of a `turn_started` record. */
export type TurnContext = v.InferOutput<typeof TurnContextSchema>;

/** One instructions file of a turn's context. */
export type FileDigest = v.InferOutput<typeof FileDigestSchema>;

/** The parts of a turn's context known before the turn, the same for every turn of a child: all but the prompt digest. */
export type TurnContextParts = Omit<TurnContext, "system_sha256">;

/** What `"system_sha256":"<64 hex digits>",` takes in the encoded field, rounded up. */
const SYSTEM_DIGEST_BYTES = 96;

const encoder = new TextEncoder();
const encodedBytes = (value: unknown): number => encoder.encode(JSON.stringify(value)).length;

/** The list parts, which are the ones that can grow (`profile` for `profile.files`). */
const LISTS = ["instructions", "skills", "profile"] as const;

/**
 * `context` as recorded: unchanged when its encoding, with the
 * `system_sha256` the runner adds, fits {@link TURN_CONTEXT_BYTES}, else with
 * entries dropped from the end of the longest list until it does, their
 * number in `omitted`. A single entry is at most a few kilobytes (a path is
 * at most 4,096 bytes, six times that escaped), so dropping entries always
 * gets there.
 */
export function boundTurnContext(context: TurnContextParts): TurnContextParts {
  const room = TURN_CONTEXT_BYTES - SYSTEM_DIGEST_BYTES;
  // Less room for the `omitted` field the trimmed record gains.
  const budget = room - 32;
  let size = encodedBytes(context);
  if (size <= room) return context;
  const lists = { instructions: [...context.instructions], skills: [...(context.skills ?? [])], profile: [...(context.profile?.files ?? [])] };
  let omitted = context.omitted ?? 0;
  while (size > budget) {
    const longest = LISTS.reduce((a, b) => (lists[b].length > lists[a].length ? b : a));
    const dropped = lists[longest].pop();
    if (dropped === undefined) break;
    // The entry and its comma; an emptied list's one entry had none, an under-count of one byte the margin covers.
    size -= encodedBytes(dropped) + 1;
    omitted++;
  }
  return {
    ...context,
    instructions: lists.instructions,
    ...(context.skills === undefined ? {} : { skills: lists.skills }),
    ...(context.profile === undefined ? {} : { profile: { ...context.profile, ...(context.profile.files === undefined ? {} : { files: lists.profile }) } }),
    omitted,
  };
}

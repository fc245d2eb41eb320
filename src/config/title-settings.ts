/**
 * `agent.titles`: whether a session without a title gets one from the
 * selected model after a completed turn (`docs/settings.md#session-titles`).
 * On by default: the spec's session list shows only stored titles, and
 * without them every list is bare ids. The request sends the provider an
 * excerpt of a turn it already answered, so a project file may set it
 * either way, like `agent.max_steps`.
 *
 * @module
 */

import * as v from "valibot";
import { exactObject } from "../util/exact-object.ts";

/** Whether titles are requested when settings say nothing. */
export const TITLES_BY_DEFAULT = true;

/** The `agent.titles` section. */
export const TitleSettingsSchema = v.pipe(
  exactObject({
    enabled: v.exactOptional(v.pipe(
      v.boolean(),
      v.description(`Ask the selected model for a session title after a completed turn of an untitled session; default ${TITLES_BY_DEFAULT}.`),
    )),
  }),
  v.description("Session titles."),
);

/** The `agent.titles` section, validated. */
export interface TitleSettings {
  readonly enabled?: boolean;
}

/** Whether `titles` (the merged `agent.titles`, if any) turns titling on. */
export function titlesEnabled(titles: TitleSettings | undefined): boolean {
  return titles?.enabled ?? TITLES_BY_DEFAULT;
}

/**
 * `providers.catalog.enabled`: the model choices a user admits into the
 * catalog, as `"<provider>/<model>"` strings. The provider is the text before
 * the first `/`, so a model id may hold further slashes (OpenRouter's
 * `anthropic/claude-sonnet-4.5`). The default, an empty list, admits no
 * choice: the spec wants every choice explicitly enabled, so a provider's
 * cached list never silently widens what a picker offers.
 *
 * A project file may only narrow the global list (its list replaces the
 * global one, and every entry must also be enabled globally): a cloned
 * repository must not be able to put a model the user never chose in front
 * of them.
 *
 * @module
 */

import * as v from "valibot";
import { PROVIDER_NAME_PATTERN } from "../protocol/identity.ts";
import { LIMITS } from "../protocol/limits.ts";
import { exactObject } from "../util/exact-object.ts";
import { hasLoneSurrogate, utf8ByteCount } from "../util/utf8.ts";

/** One enabled choice, split. */
export interface EnabledChoice {
  readonly provider: string;
  readonly model: string;
}

// deno-lint-ignore no-control-regex -- matching controls is the point
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

/**
 * Splits `"<provider>/<model>"` at its first `/`, or null when either side
 * breaks its settings rule (provider name grammar; model 1-256 UTF-8 bytes,
 * no control characters, well-formed).
 */
export function parseEnabledId(id: string): EnabledChoice | null {
  const slash = id.indexOf("/");
  if (slash < 0) return null;
  const provider = id.slice(0, slash);
  const model = id.slice(slash + 1);
  if (!PROVIDER_NAME_PATTERN.test(provider)) return null;
  if (model === "" || utf8ByteCount(model) > LIMITS.name_bytes || CONTROL.test(model) || hasLoneSurrogate(model)) return null;
  return { provider, model };
}

// JSON Schema sees the shape (a provider name, a slash, a control-free rest); the byte bound is runtime-only.
const EnabledIdSchema = v.pipe(
  v.string(),
  // deno-lint-ignore no-control-regex -- matching controls is the point
  v.regex(/^[A-Za-z0-9._-]{1,64}\/[^\u0000-\u001F\u007F-\u009F]{1,256}$/),
  v.check((id) => parseEnabledId(id) !== null),
  v.description("\"<provider>/<model>\": the provider is the text before the first '/'; the model is 1-256 UTF-8 bytes."),
);

/** The valibot schema of the `providers.catalog` section. */
export const CatalogSettingsSchema = v.pipe(
  exactObject({
    enabled: v.exactOptional(v.pipe(
      v.array(EnabledIdSchema),
      v.maxLength(LIMITS.catalog_models),
      v.check((ids) => new Set(ids).size === ids.length, "Duplicate entry"),
      v.metadata({ uniqueItems: true }),
      v.description("Model choices the catalog may offer; default [] offers none. A project list must be a subset of the global one."),
    )),
  }),
  v.description("Which cached models the model catalog offers."),
);

/** The `providers.catalog` section. */
export interface CatalogSettings {
  readonly enabled?: readonly string[];
}

/** The admitted enabled list of merged settings, split; empty when unset. */
export function enabledChoices(catalog: CatalogSettings | undefined): EnabledChoice[] {
  return (catalog?.enabled ?? []).flatMap((id) => {
    const choice = parseEnabledId(id);
    return choice === null ? [] : [choice];
  });
}

/** Whether a project's enabled list only narrows the global one (an absent project list narrows nothing). */
export function projectCatalogNarrows(global: CatalogSettings | undefined, project: CatalogSettings | undefined): boolean {
  if (project?.enabled === undefined) return true;
  const allowed = new Set(global?.enabled ?? []);
  return project.enabled.every((id) => allowed.has(id));
}

/** The enabled entries whose provider is not among `providers` (built-ins and configured endpoints). */
export function unknownCatalogProviders(catalog: CatalogSettings | undefined, providers: ReadonlySet<string>): string[] {
  return (catalog?.enabled ?? []).filter((id) => !providers.has(parseEnabledId(id)?.provider ?? ""));
}

/**
 * `magi-code config check`'s view of `providers.catalog.enabled`: the two
 * rules JSON Schema cannot state, each reported at its entry so a person can
 * fix it (startup only says `configuration_invalid`).
 *
 * @module
 */

import { projectCatalogNarrows, unknownCatalogProviders } from "../config/catalog-settings.ts";
import { resolveEndpoints } from "../config/providers.ts";
import type { Settings } from "../config/settings.ts";

/** A problem in one file at one JSON path. */
export interface CatalogProblem {
  readonly file: string;
  readonly path: string;
  readonly message: string;
}

/**
 * Problems of the enabled lists: a project entry that the global list does
 * not enable (a project may only narrow it), and an entry naming a provider
 * that is neither built in nor configured.
 */
export function catalogProblems(
  files: { readonly global: string; readonly project: string | null },
  global: Settings,
  project: Settings,
  merged: Settings,
): CatalogProblem[] {
  const out: CatalogProblem[] = [];
  const projectList = project.providers?.catalog?.enabled ?? [];
  if (files.project !== null && !projectCatalogNarrows(global.providers?.catalog, project.providers?.catalog)) {
    const allowed = new Set(global.providers?.catalog?.enabled ?? []);
    projectList.forEach((id, index) => {
      if (allowed.has(id)) return;
      out.push({
        file: files.project!,
        path: `$.providers.catalog.enabled[${index}]`,
        message: "a project file may only narrow the global enabled list; enable the model in the global file first",
      });
    });
  }
  const known = new Set(resolveEndpoints(merged).keys());
  const unknown = new Set(unknownCatalogProviders(merged.providers?.catalog, known));
  const list = merged.providers?.catalog?.enabled ?? [];
  const file = project.providers?.catalog?.enabled !== undefined && files.project !== null ? files.project : files.global;
  list.forEach((id, index) => {
    if (!unknown.has(id)) return;
    out.push({ file, path: `$.providers.catalog.enabled[${index}]`, message: "names no provider: use openai, anthropic, ollama or a name under providers.endpoints" });
  });
  return out;
}

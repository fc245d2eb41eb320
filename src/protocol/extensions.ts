/**
 * The `extensions` object of `initialize`'s result: one descriptor per
 * negotiated extension that has one, keyed by its capability name. It is
 * built only for a client that required such an extension (the key is
 * absent otherwise, so a base client's result is unchanged), and this
 * module loads only then (`admission/initialize.ts`).
 *
 * @module
 */

import type { ClientToolsDescriptor } from "./client-tool-registry.ts";
import type { ExtensionCapability } from "./negotiation.ts";
import { TOOL_CARDS_DESCRIPTOR, type ToolCardsDescriptor } from "./tool-cards.ts";

/** Every descriptor, by the extension it describes (`client.tools`'s depends on the registry: `admission/initialize.ts` adds it). */
export type ExtensionDescriptors = {
  readonly "tool.cards"?: ToolCardsDescriptor;
  readonly "client.tools"?: ClientToolsDescriptor;
};

const DESCRIPTORS: { readonly [C in Exclude<keyof ExtensionDescriptors, "client.tools"> & ExtensionCapability]-?: NonNullable<ExtensionDescriptors[C]> } = {
  "tool.cards": TOOL_CARDS_DESCRIPTOR,
};

/** The descriptors of the extensions in `required`, or null when none of them has one. */
export function extensionDescriptors(required: readonly string[]): ExtensionDescriptors | null {
  const entries = Object.entries(DESCRIPTORS).filter(([name]) => required.includes(name));
  return entries.length === 0 ? null : Object.fromEntries(entries);
}

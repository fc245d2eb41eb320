/**
 * The child's current selection: provider, model, requested effort and what
 * the effort policy makes of them, under one opaque revision. `status` reads
 * it from memory; the turn worker runs with it; `selection.set`, attachments
 * and catalog observations replace it.
 *
 * Every attachment and every deliberate mutation gets a fresh revision. A
 * catalog observation (a page, an attachment, a turn's admission) only
 * refreshes the cached reasoning hint, and rotates the revision only when
 * that changes the effort semantics (support, permitted efforts, effective
 * effort): a client's revision then fails `selection.set` with
 * `stale_selection` and it must look at status again before mutating.
 *
 * @module
 */

import type { Runtime } from "../../host/runtime.ts";
import type { Endpoint } from "../../config/providers.ts";
import { effectiveEffort, type EffortPolicy, effortPolicy, type ReasoningHint } from "../../policy/effort-policy.ts";
import type { Effort } from "../../policy/efforts.ts";
import { lengthPrefixed, sha256HexSync } from "../../util/digest.ts";
import { isSafeDisplayName } from "../../util/redaction.ts";

/** A selection's inputs. */
export interface SelectionValue {
  readonly provider: string;
  readonly model: string;
  readonly endpoint: Endpoint;
  /** The retained request, including a saved one that no longer applies. */
  readonly requested: Effort;
  /** What the provider's cached list said about reasoning controls for this model. */
  readonly hint: ReasoningHint;
}

/** The wire `status.selection` object. */
export interface SelectionObject {
  readonly [key: string]: string | null | readonly string[];
  readonly revision: string;
  readonly provider: string | null;
  readonly model: string | null;
  readonly requested_effort: Effort;
  readonly effective_effort: Effort | null;
  readonly effort_support: EffortPolicy["support"];
  readonly permitted_efforts: readonly Effort[];
}

/** The policy of `value`. */
export function policyOf(value: SelectionValue): EffortPolicy {
  return effortPolicy(value.endpoint.api, value.model, value.hint);
}

/** A key equal for two values exactly when their effort semantics agree. */
function semantics(value: SelectionValue): string {
  const policy = policyOf(value);
  return JSON.stringify([policy.support, policy.permitted, effectiveEffort(policy, value.requested)]);
}

/** Holds the current selection and issues its revisions. */
export class SelectionState {
  readonly #runtime: Runtime;
  // Random per child: two children with the same selection never issue each other's revisions.
  readonly #scope: string;
  readonly #startup: SelectionValue;
  #value: SelectionValue;
  #revision = "";
  #generation = 0;
  #rendered: SelectionObject | null = null;

  /** Starts at the startup selection with a first revision. */
  constructor(runtime: Runtime, startup: SelectionValue) {
    this.#runtime = runtime;
    this.#scope = runtime.randomUUID();
    this.#startup = startup;
    this.#value = startup;
    this.#rotate();
  }

  get value(): SelectionValue {
    return this.#value;
  }

  get revision(): string {
    return this.#revision;
  }

  /** The selection startup admitted, which a session without saved preferences uses. */
  get startup(): SelectionValue {
    return this.#startup;
  }

  /** Replaces the selection after an attachment or a mutation: always a fresh revision. */
  replace(value: SelectionValue): void {
    this.#value = value;
    this.#rotate();
  }

  /** Whether `hint` would change the current selection's effort semantics. */
  changes(hint: ReasoningHint): boolean {
    return semantics({ ...this.#value, hint }) !== semantics(this.#value);
  }

  /** Records a catalog observation; rotates the revision only when effort semantics changed. */
  observe(hint: ReasoningHint): void {
    if (hint === this.#value.hint) return;
    const changed = this.changes(hint);
    this.#value = { ...this.#value, hint };
    this.#rendered = null;
    if (changed) this.#rotate();
  }

  /** The `status.selection` object (memory only). */
  render(): SelectionObject {
    if (this.#rendered !== null) return this.#rendered;
    const value = this.#value;
    const policy = policyOf(value);
    this.#rendered = {
      revision: this.#revision,
      provider: isSafeDisplayName(value.provider) ? value.provider : null,
      model: isSafeDisplayName(value.model) ? value.model : null,
      requested_effort: value.requested,
      effective_effort: effectiveEffort(policy, value.requested),
      effort_support: policy.support,
      permitted_efforts: policy.permitted,
    };
    return this.#rendered;
  }

  /** The effort a turn sends now: the effective one, `default` (no override) when there is none. */
  effortToSend(): Effort {
    return effectiveEffort(policyOf(this.#value), this.#value.requested) ?? "default";
  }

  // Deterministic in the generation and the state it names (like history revisions), so a
  // replayed transcript names the same revisions; the generation makes each one new in this child.
  #rotate(): void {
    const generation = (++this.#generation).toString(36);
    const value = this.#value;
    const digest = sha256HexSync(lengthPrefixed(["magi-code.selection-revision.v2", this.#scope, generation, value.provider, value.model, value.requested, String(value.hint)]));
    this.#revision = `s${generation}-${digest.slice(0, 32)}`;
    this.#rendered = null;
  }
}

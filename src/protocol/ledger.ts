/**
 * The child-lifetime request-id ledger. Ids are never reusable, even after
 * their response, and rejected but well-formed requests count too, so a client
 * can never make the backend execute one id twice.
 *
 * @module
 */

/** What the ledger decides for one well-formed request id. */
export type LedgerVerdict = "admitted" | "duplicate" | "limit";

/** Remembers up to `capacity` request ids for the life of the child. */
export class IdLedger {
  readonly #capacity: number;
  readonly #seen = new Set<string>();

  /** Creates a ledger holding at most `capacity` ids. */
  constructor(capacity: number) {
    this.#capacity = capacity;
  }

  /** How many ids are recorded. */
  get size(): number {
    return this.#seen.size;
  }

  /**
   * Records `id`: `duplicate` if it was seen before (nothing recorded),
   * `limit` if it is new but the ledger is full (the connection must close),
   * otherwise `admitted`.
   */
  record(id: string): LedgerVerdict {
    if (this.#seen.has(id)) return "duplicate";
    if (this.#seen.size >= this.#capacity) return "limit";
    this.#seen.add(id);
    return "admitted";
  }
}

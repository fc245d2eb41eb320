/**
 * Lookups by a name that came from outside (settings keys, tool names,
 * frame fields). `table[name]` alone would also find `constructor`,
 * `toString` or `__proto__` on `Object.prototype`; these see own properties
 * only. The predicate itself is the built-in `Object.hasOwn`.
 *
 * @module
 */

/** `table[key]` when `key` is an own property of `table`; undefined otherwise, or when there is no table. */
export function ownValue<T>(table: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return table !== undefined && Object.hasOwn(table, key) ? table[key] : undefined;
}

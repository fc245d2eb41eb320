/**
 * Effort requests: one vocabulary shared by settings, stored session
 * preferences and the provider request builders, so a value accepted in one
 * place is never unknown in another.
 *
 * @module
 */

/** Effort requests, exactly as the wire spells them. */
export const EFFORTS = ["default", "low", "medium", "high", "xhigh", "max"] as const;
/** One effort request; `default` means no explicit override. */
export type Effort = typeof EFFORTS[number];

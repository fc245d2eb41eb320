/**
 * What a non-2xx provider response means, as data. The body is deliberately
 * not an input: providers echo keys and prompt text in error messages, so a
 * failure is classified from the status and `retry-after` header alone.
 *
 * @module
 */

import { DiagnosticCode } from "../../protocol/errors.ts";

/** Failure codes for a provider request that got an HTTP error status (diagnostic codes). */
export const HttpFailureCode = {
  /** 401/403: the key is missing, wrong or lacks access. */
  auth: DiagnosticCode.providerAuth,
  /** 429: slow down; see `retryAfterMs`. */
  rateLimited: DiagnosticCode.providerRateLimited,
  /** 5xx: the provider failed; retrying may help. */
  server: DiagnosticCode.providerServerError,
  /** 400/404/413/422: our request was refused; retrying will not help. */
  badRequest: DiagnosticCode.providerBadRequest,
  /** Any other status. */
  other: DiagnosticCode.providerHttpError,
} as const;

/** One of {@link HttpFailureCode}'s values. */
export type HttpFailureCode = typeof HttpFailureCode[keyof typeof HttpFailureCode];

/** A classified HTTP failure. */
export interface HttpFailure {
  /** Fixed code. */
  readonly code: HttpFailureCode;
  /** The HTTP status. */
  readonly status: number;
  /** How long the provider asked us to wait, when it said so in whole seconds. */
  readonly retryAfterMs: number | null;
}

/** Longest wait we honour from `retry-after`; anything longer is treated as unspecified. */
export const MAX_RETRY_AFTER_MS = 600_000;

/** Classifies a failed provider response from its status and `retry-after` header. */
export function classifyHttpFailure(status: number, retryAfter: string | null): HttpFailure {
  const code = status === 401 || status === 403
    ? HttpFailureCode.auth
    : status === 429
    ? HttpFailureCode.rateLimited
    : status >= 500
    ? HttpFailureCode.server
    : status === 400 || status === 404 || status === 413 || status === 422
    ? HttpFailureCode.badRequest
    : HttpFailureCode.other;
  // HTTP-date values are ignored: comparing them needs a trusted clock, and providers send seconds.
  const seconds = retryAfter !== null && /^\d{1,6}$/.test(retryAfter.trim()) ? Number(retryAfter.trim()) : null;
  const retryAfterMs = seconds !== null && seconds * 1000 <= MAX_RETRY_AFTER_MS ? seconds * 1000 : null;
  return { code, status, retryAfterMs };
}

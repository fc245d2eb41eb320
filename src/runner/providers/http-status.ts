/**
 * What a non-2xx provider response means, as data. The body is deliberately
 * not an input: providers echo keys and prompt text in error messages, so a
 * failure is classified from the status alone.
 *
 * @module
 */

import { DiagnosticCode } from "../../protocol/errors.ts";

/** Failure codes for a provider request that got an HTTP error status (diagnostic codes). */
export const HttpFailureCode = {
  /** 401/403: the key is missing, wrong or lacks access. */
  auth: DiagnosticCode.providerAuth,
  /** 429: slow down. */
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
  readonly code: HttpFailureCode;
  readonly status: number;
}

/** Classifies a failed provider response from its status. */
export function classifyHttpFailure(status: number): HttpFailure {
  const code = status === 401 || status === 403
    ? HttpFailureCode.auth
    : status === 429
    ? HttpFailureCode.rateLimited
    : status >= 500
    ? HttpFailureCode.server
    : status === 400 || status === 404 || status === 413 || status === 422
    ? HttpFailureCode.badRequest
    : HttpFailureCode.other;
  return { code, status };
}

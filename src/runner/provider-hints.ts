/**
 * Diagnostic summaries a newcomer can act on for the two provider failures
 * that are almost always a setup problem: nothing answering at the base URL
 * (the first run without Ollama), and HTTP 404 (a base URL missing its `/v1`).
 * Both name the base URL that was tried, because "check the base URL" is
 * useless without it; the URL is shown as scheme, host, port and path only
 * (user info, query and fragment can carry keys) and then redacted against
 * the known secrets, so neither a key nor any local path reaches the text.
 *
 * @module
 */

import { DiagnosticCode } from "../protocol/errors.ts";
import { BUILTIN_PROVIDERS, type Endpoint } from "../config/providers.ts";
import { redactSecrets } from "../util/redaction.ts";

/** Where the settings and provider choices are explained. */
const SETTINGS_DOC = "docs/settings.md";
/** Longest base URL shown; longer ones are cut (the summary itself is bounded to 1,024 bytes). */
const MAX_SHOWN_URL = 200;

/** A base URL without user info, query or fragment, redacted and bounded; `null` if it does not parse. */
export function shownBaseUrl(baseUrl: string, secrets: readonly string[]): string | null {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return null;
  }
  const bare = `${url.protocol}//${url.host}${url.pathname === "/" ? "" : url.pathname}`;
  const redacted = redactSecrets(bare, secrets);
  return redacted.length > MAX_SHOWN_URL ? `${redacted.slice(0, MAX_SHOWN_URL)}…` : redacted;
}

/** Whether `endpoint` is the keyless Ollama default, unchanged by settings. */
function isDefaultOllama(endpoint: Endpoint): boolean {
  const ollama = BUILTIN_PROVIDERS.ollama;
  return endpoint.name === ollama.name && endpoint.baseUrl === ollama.baseUrl && endpoint.api === ollama.api;
}

/**
 * The summary for a provider failure `code` (with the HTTP `status`, when
 * there was a response) at `endpoint`, or `null` when the fixed summary of
 * the code says all there is to say.
 */
export function providerFailureSummary(
  code: DiagnosticCode,
  status: number | null,
  endpoint: Endpoint,
  secrets: readonly string[],
): string | null {
  const url = shownBaseUrl(endpoint.baseUrl, secrets);
  if (url === null) return null;
  if (code === DiagnosticCode.providerUnreachable) {
    if (isDefaultOllama(endpoint)) {
      return `Nothing answered at ${url}, the default Ollama server. Start Ollama (ollama serve), or choose another provider in settings.jsonc; see ${SETTINGS_DOC}.`;
    }
    return `The provider could not be reached at ${url}. Check the base URL and the network; see ${SETTINGS_DOC}.`;
  }
  if (code === DiagnosticCode.providerBadRequest && status === 404) {
    return `The provider answered HTTP 404 at ${url}: the base URL is likely wrong (OpenAI-compatible servers usually end in /v1), or the model does not exist there; see ${SETTINGS_DOC}.`;
  }
  return null;
}

/**
 * Fetching a provider's model list for `model.refresh`: `GET {base_url}/models`
 * with the provider's normal credentials. `openai-chat` and
 * `openai-responses` endpoints answer the OpenAI list format
 * (`{"object":"list","data":[{"id":…}]}`), which Ollama, vLLM, LM Studio and
 * OpenRouter serve too (OpenRouter adds `name` and `supported_parameters`);
 * `anthropic-messages` answers pages (`data`, `has_more`, `last_id`) that
 * continue with `after_id`.
 *
 * Every answer is bounded (`catalog_file_bytes` per response, 16 pages,
 * `catalog_models` models, `catalog_string_bytes` per id) and validated as a
 * whole before anything is written; any failure is `catalog_unavailable`
 * and the caller keeps the old cache. Only ids, display names, the
 * reasoning hint and the context window (Anthropic's `max_input_tokens`,
 * OpenRouter's `context_length`) are kept: descriptions, URLs, prices and the raw body
 * never leave this module, and no error carries a status text or body.
 *
 * @module
 */

import type { Runtime } from "../host/runtime.ts";
import { ErrorCode } from "../protocol/errors.ts";
import type { JsonValue } from "../protocol/json-value.ts";
import { parseFrame } from "../protocol/json.ts";
import { LIMITS } from "../protocol/limits.ts";
import { readBounded } from "../util/read-bounded.ts";
import { isPrintable, isSafeDisplayName } from "../util/redaction.ts";
import type { Endpoint } from "../config/providers.ts";
import { type CachedModel, checkModels } from "./cache-format.ts";
import { isContextWindow } from "../config/compaction-settings.ts";

/** Most pages an Anthropic listing may take: 2,048 models at its 1,000 per page need 3. */
export const MAX_PAGES = 16;
/** Models asked for per Anthropic page (its maximum). */
const PAGE_LIMIT = 1000;
/** The Anthropic API version the list request states (the one the Messages builder sends). */
const ANTHROPIC_VERSION = "2023-06-01";

/** What a list fetch needs. */
export interface ListRequest {
  readonly runtime: Runtime;
  readonly endpoint: Endpoint;
  /** The key, or null for a keyless endpoint (no auth header at all). */
  readonly apiKey: string | null;
  /** The caller's cancellation (shutdown, EOF). */
  readonly signal: AbortSignal;
  /** The whole listing's time bound, all pages together. */
  readonly deadlineMs: number;
}

/** The outcome of {@link fetchModelList}. */
export type ListResult =
  | { readonly ok: true; readonly models: readonly CachedModel[] }
  | { readonly ok: false; readonly code: typeof ErrorCode.catalogUnavailable | typeof ErrorCode.operationCancelled };

const UNAVAILABLE = { ok: false, code: ErrorCode.catalogUnavailable } as const;
const CANCELLED = { ok: false, code: ErrorCode.operationCancelled } as const;

type JsonRecord = { readonly [key: string]: JsonValue };
const isRecord = (value: JsonValue | undefined): value is JsonRecord =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** One listed model, or null when the entry is not a model object with a well-formed id. */
function modelOf(entry: JsonValue): CachedModel | null {
  if (!isRecord(entry) || typeof entry.id !== "string" || entry.id === "" || !isPrintable(entry.id)) return null;
  const named = typeof entry.display_name === "string" ? entry.display_name : typeof entry.name === "string" ? entry.name : null;
  // A display name is decoration: an unsafe or overlong one becomes null (the spec's rule for names), never a failed refresh.
  const name = named !== null && isSafeDisplayName(named) ? named : null;
  const parameters = entry.supported_parameters;
  const reasoning = Array.isArray(parameters)
    ? parameters.some((parameter) => parameter === "reasoning" || parameter === "reasoning_effort")
    : null;
  // Like a name, a window is decoration: one that is not a sane token count is left out, never a failed refresh.
  const window = entry.max_input_tokens ?? entry.context_length;
  return { id: entry.id, name, reasoning, ...(isContextWindow(window) ? { contextWindow: window } : {}) };
}

interface Page {
  readonly models: CachedModel[];
  /** The Anthropic continuation id, when `has_more` says there is more. */
  readonly next: string | null;
}

function pageOf(body: Uint8Array): Page | null {
  const parsed = parseFrame(body, LIMITS.json_depth);
  if (!parsed.ok || !isRecord(parsed.value) || !Array.isArray(parsed.value.data)) return null;
  const models: CachedModel[] = [];
  for (const entry of parsed.value.data) {
    const model = modelOf(entry);
    if (model === null) return null;
    models.push(model);
  }
  const more = parsed.value.has_more === true;
  const last = parsed.value.last_id;
  if (more && (typeof last !== "string" || last === "")) return null;
  return { models, next: more ? last as string : null };
}

function headersFor(endpoint: Endpoint, apiKey: string | null): Record<string, string> {
  const headers: Record<string, string> = { accept: "application/json" };
  if (endpoint.api === "anthropic-messages") {
    headers["anthropic-version"] = ANTHROPIC_VERSION;
    if (apiKey !== null) headers["x-api-key"] = apiKey;
  } else if (apiKey !== null) headers.authorization = `Bearer ${apiKey}`;
  return headers;
}

function pageUrl(endpoint: Endpoint, after: string | null): string {
  const base = `${endpoint.baseUrl.replace(/\/+$/, "")}/models`;
  if (endpoint.api !== "anthropic-messages") return base;
  return `${base}?limit=${PAGE_LIMIT}${after === null ? "" : `&after_id=${encodeURIComponent(after)}`}`;
}

/** Fetches and validates `request.endpoint`'s whole model list. Never throws. */
export async function fetchModelList(request: ListRequest): Promise<ListResult> {
  const { runtime, endpoint, signal } = request;
  if (signal.aborted) return CANCELLED;
  const abort = new AbortController();
  const onAbort = () => abort.abort();
  signal.addEventListener("abort", onAbort, { once: true });
  const timer = runtime.setTimer(request.deadlineMs, () => abort.abort());
  try {
    const models: CachedModel[] = [];
    let after: string | null = null;
    for (let page = 0; page < MAX_PAGES; page++) {
      const response = await runtime.fetch(pageUrl(endpoint, after), {
        method: "GET",
        headers: headersFor(endpoint, request.apiKey),
        signal: abort.signal,
        redirect: "error",
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        return signal.aborted ? CANCELLED : UNAVAILABLE;
      }
      const body = await readBounded(response.body, LIMITS.catalog_file_bytes);
      if (signal.aborted) return CANCELLED;
      const parsed = body === null ? null : pageOf(body);
      if (parsed === null) return UNAVAILABLE;
      models.push(...parsed.models);
      if (models.length > LIMITS.catalog_models) return UNAVAILABLE;
      if (parsed.next === null) return checkModels(models) === null ? { ok: true, models } : UNAVAILABLE;
      after = parsed.next;
    }
    return UNAVAILABLE;
  } catch {
    return signal.aborted ? CANCELLED : UNAVAILABLE;
  } finally {
    timer.dispose();
    signal.removeEventListener("abort", onAbort);
  }
}

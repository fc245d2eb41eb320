/**
 * The concrete bounds of protocol version 1, published verbatim in the
 * `initialize` result's `limits` object (a negotiated extension's only to
 * the client that negotiated it). Names are documented in
 * `docs/protocol.md#limits`; the core reads its bounds from here so the
 * published value and the enforced value cannot drift apart.
 *
 * @module
 */

/** Every bound of protocol version 1, keyed by its published name. */
export const LIMITS = {
  input_frame_bytes: 65_536,
  output_frame_bytes: 65_536,
  json_depth: 32,
  identifier_bytes: 64,
  required_capabilities: 16,
  read_batch_bytes: 4_096,
  prompt_bytes: 16_384,
  history_chunk_bytes: 16_384,
  event_chunk_bytes: 4_000,
  history_page_bytes: 32_768,
  history_page_entries: 100,
  history_snapshot_bytes: 8_388_608,
  history_snapshot_parts: 10_000,
  stored_history_bytes: 67_108_864,
  stored_history_lines: 100_000,
  pending_output_frames: 32,
  worker_events: 32,
  critical_event_wait_ms: 2_000,
  run_content_bytes: 8_388_608,
  run_content_segments: 512,
  run_activities: 4_096,
  activity_id_bytes: 1_024,
  summary_bytes: 1_024,
  approval_expiry_ms: 60_000,
  request_ids: 4_096,
  output_deadline_ms: 2_000,
  closing_deadline_ms: 2_000,
  cleanup_wait_ms: 2_000,
  name_bytes: 256,
  selection_append_bytes: 4_096,
  discovery_page_bytes: 32_768,
  discovery_page_entries: 100,
  discovery_directory_entries: 4_096,
  discovery_sessions: 256,
  discovery_session_bytes: 8_388_608,
  discovery_session_lines: 10_000,
  discovery_scan_bytes: 67_108_864,
  discovery_scan_lines: 100_000,
  discovery_scan_ms: 2_000,
  discovery_title_bytes: 256,
  discover_page_entries: 100,
  discover_page_bytes: 32_768,
  discover_directory_entries: 1_048_576,
  discover_page_scan_bytes: 67_108_864,
  discover_page_scan_lines: 100_000,
  discover_page_ms: 2_000,
  discover_session_bytes: 8_388_608,
  discover_session_lines: 10_000,
  catalog_page_bytes: 32_768,
  catalog_page_entries: 100,
  catalog_providers: 32,
  catalog_models: 2_048,
  catalog_file_bytes: 1_048_576,
  catalog_scan_bytes: 8_388_608,
  catalog_snapshot_bytes: 1_048_576,
  catalog_string_bytes: 256,
  catalog_scan_ms: 2_000,
} as const;

/** The type of {@link LIMITS}. */
export type Limits = typeof LIMITS;

/**
 * The bounds of the negotiated `session.discover`, published only to a
 * client that required it: a base-only client never sees an extension's
 * fields (`docs/features/local-agent-extensions.md`). The core enforces
 * them from {@link LIMITS} whoever asked.
 */
export const DISCOVER_LIMIT_NAMES = [
  "discover_page_entries",
  "discover_page_bytes",
  "discover_directory_entries",
  "discover_page_scan_bytes",
  "discover_page_scan_lines",
  "discover_page_ms",
  "discover_session_bytes",
  "discover_session_lines",
] as const satisfies readonly (keyof Limits)[];

/** The name of one bound of `session.discover`. */
export type DiscoverLimitName = typeof DISCOVER_LIMIT_NAMES[number];

/** What `initialize` publishes: every base bound, and `session.discover`'s when it was negotiated. */
export type PublishedLimits = Omit<Limits, DiscoverLimitName> & Partial<Pick<Limits, DiscoverLimitName>>;

/** The `limits` of `initialize` for a client that did (`discover`) or did not negotiate `session.discover`. */
export function publishedLimits(discover: boolean): PublishedLimits {
  if (discover) return LIMITS;
  const base: Partial<Limits> = { ...LIMITS };
  for (const name of DISCOVER_LIMIT_NAMES) delete base[name];
  return base as PublishedLimits;
}

/**
 * The projection of a compacted history that outgrew the snapshot budget
 * (docs/storage.md, "Compaction"): while the whole history fits (8 MiB,
 * 10,000 parts) every entry stays pageable; when it would not, the
 * projection starts at the earliest compaction boundary from which it fits,
 * so a session that compacts keeps paging however long it grows, and shows
 * the compaction's summary where its scrollback begins. Without such a
 * boundary the answer stays `history_limit`, as the spec says.
 *
 * @module
 */

import { ErrorCode } from "../protocol/errors.ts";
import type { Cooperation } from "./cooperative-slices.ts";
import { type AsyncProjectionResult, projectHistoryAsync, type ProjectionOptions } from "./projection.ts";
import type { SessionRecord } from "./records.ts";

/**
 * Where a projection may start, ascending: for each replacing compaction,
 * right after the last record of the turn it replaces through (so the turn
 * it was made in shows whole when it kept that turn's input), or at the
 * compaction itself when no earlier record has that turn.
 */
export function compactionBoundaries(records: readonly SessionRecord[]): number[] {
  const boundaries: number[] = [];
  records.forEach((record, index) => {
    if (record.type !== "compaction" || record.v !== 2) return;
    let start = index;
    for (let before = index - 1; before >= 0; before--) {
      const earlier = records[before]!;
      if ("turn_id" in earlier && earlier.turn_id === record.through_turn) {
        start = before + 1;
        break;
      }
    }
    // Boundaries ascend with their compactions; one that reaches further back than an earlier one adds nothing.
    if (boundaries.length === 0 || start > boundaries.at(-1)!) boundaries.push(start);
  });
  return boundaries;
}

/**
 * Projects `records` whole, or from the earliest compaction boundary whose
 * projection fits the snapshot budget. The boundary is found by bisection:
 * a later start projects a suffix of what an earlier one does, so it never
 * needs more room, and the latest boundary is always tried before giving
 * up with `history_limit`.
 */
export async function projectWithinBudget(
  records: readonly SessionRecord[],
  options: ProjectionOptions,
  cooperation: Cooperation,
): Promise<AsyncProjectionResult> {
  const whole = await projectHistoryAsync(records, options, cooperation);
  if (whole.ok || whole.code !== ErrorCode.historyLimit) return whole;
  const boundaries = compactionBoundaries(records);
  let [low, high] = [0, boundaries.length - 1];
  let best: AsyncProjectionResult = whole;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const projected = await projectHistoryAsync(records.slice(boundaries[middle]), options, cooperation);
    if (projected.ok) {
      best = projected;
      high = middle - 1;
    } else if (projected.code === ErrorCode.historyLimit) low = middle + 1;
    else return projected;
  }
  return best;
}

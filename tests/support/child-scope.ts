/**
 * What legitimately differs between two children given the same input: the
 * spec scopes every ephemeral identifier to its child, so the `instance_id`
 * of every frame and the selection revision inside `status` objects (a
 * `status` result, or the `status` an `initialize` result carries) are
 * replaced by placeholders before two transcripts are compared.
 *
 * @module
 */

type Scoped = { readonly instance_id?: unknown; readonly result?: unknown };

function withoutSelectionRevision(value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return value;
  const record = value as Record<string, unknown>;
  const selection = record.selection;
  const status = record.status;
  return {
    ...record,
    ...(typeof selection === "object" && selection !== null && "revision" in selection ? { selection: { ...selection, revision: "<revision>" } } : {}),
    ...(typeof status === "object" && status !== null ? { status: withoutSelectionRevision(status) } : {}),
  };
}

/** `frames` with their child-scoped identifiers replaced, for comparing two children's transcripts. */
export function withoutChildScope<T extends Scoped>(frames: readonly T[]): T[] {
  return frames.map((frame) => ({ ...frame, instance_id: "<instance>", ...("result" in frame ? { result: withoutSelectionRevision(frame.result) } : {}) }));
}

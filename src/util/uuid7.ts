/**
 * UUIDv7 (RFC 9562): a 48-bit millisecond timestamp followed by random bits,
 * so ascending ASCII order of the lowercase hex form is creation order. Session
 * ids use it; the randomness comes from the runtime's v4 UUIDs so tests can
 * inject both clock and randomness.
 *
 * @module
 */

/** Builds a UUIDv7 from a wall-clock time in milliseconds and a random v4 UUID. */
export function uuid7(nowMs: number, randomV4: string): string {
  const time = Math.max(0, Math.floor(nowMs)).toString(16).padStart(12, "0").slice(-12);
  const random = randomV4.replace(/-/g, "");
  // Keep 74 random bits: v4's bits at the positions v7 also leaves random.
  const randA = random.slice(13, 16);
  const variant = ((parseInt(random[16]!, 16) & 0x3) | 0x8).toString(16);
  const randB = random.slice(17, 32);
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${randA}-${variant}${randB.slice(0, 3)}-${randB.slice(3, 15)}`;
}

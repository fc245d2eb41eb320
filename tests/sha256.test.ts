/**
 * `src/util/sha256.ts` against the runtime's native SHA-256 (`node:crypto`,
 * which Node and Deno both serve to tests): the standard vectors, every
 * length across the padding boundaries (55, 56, 63, 64 bytes and beyond),
 * and random inputs; and `sha256HexSync`'s hex.
 */

import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { describe, it } from "node:test";
import fc from "fast-check";
import { sha256 } from "../src/util/sha256.ts";
import { sha256HexSync } from "../src/util/digest.ts";

const native = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
const text = (value: string) => new TextEncoder().encode(value);

describe("sha256()", () => {
  it("sha256() gives the FIPS 180-4 example digests", () => {
    assert.equal(sha256HexSync(text("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    assert.equal(sha256HexSync(text("abc")), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    assert.equal(
      sha256HexSync(text("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    );
    assert.equal(sha256HexSync(new Uint8Array(1_000_000).fill(0x61)), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  });

  it("sha256() matches the native hash for every length from 0 to 300 bytes", () => {
    for (let length = 0; length <= 300; length++) {
      const bytes = Uint8Array.from({ length }, (_, index) => (index * 131 + length) & 0xff);
      assert.equal(sha256HexSync(bytes), native(bytes), `length ${length}`);
    }
  });

  it("sha256() matches the native hash on random inputs up to 20,000 bytes", () => {
    fc.assert(fc.property(fc.uint8Array({ maxLength: 20_000 }), (bytes) => sha256HexSync(bytes) === native(bytes)));
  });

  it("sha256() returns 32 bytes and leaves its input alone", () => {
    const input = text("unchanged");
    const digest = sha256(input);
    assert.equal(digest.length, 32);
    assert.deepEqual(input, text("unchanged"));
  });
});

/**
 * StreamRedactor: redaction of text that arrives in deltas.
 *
 * What holds, for any split of a text into deltas (each push's output and
 * the final flush, in order, called "the stream"):
 *
 * 1. **No leak.** No piece, and not the concatenation, contains a known
 *    secret (of at least MIN_KNOWN_SECRET_LENGTH characters, whitespace and
 *    overlaps included), an `sk-…` key, or the token of a `Bearer <token>`,
 *    wherever the deltas were cut.
 * 2. **Same text as whole-text redaction.** The concatenation equals
 *    `redactSecrets(whole)` when the known secrets hold no whitespace and
 *    every case-insensitive `bearer` in the text follows no token character, is
 *    not itself the token of an earlier `Bearer`, and is followed by fewer
 *    than 59 whitespace characters. Outside that, the two may differ in
 *    harmless ways: two secrets separated only by whitespace that a secret
 *    contains become two markers instead of one; a run glued to `Bearer` is
 *    released apart from it.
 * 3. **Identity.** Text that `redactSecrets` leaves alone comes out
 *    unchanged.
 * 4. **Bounded hold-back.** Text of short words is released up to about one
 *    longest-secret length (plus one word) before its end.
 *
 * @module
 */

import assert from "node:assert/strict";
import { describe, it } from "node:test";
import fc from "fast-check";
import { StreamRedactor } from "../src/runner/stream-redactor.ts";
import { MIN_KNOWN_SECRET_LENGTH, REDACTION_MARKER, redactSecrets } from "../src/util/redaction.ts";
import { fuzzRuns } from "./support/fuzz-runs.ts";

const OPENAI_KEY = "sk-test-openai-0123456789abcdef";
const ANTHROPIC_KEY = "sk-ant-test-0123456789abcdef";
const CREDENTIAL = "horse.battery.staple.credential";
/** Whitespace-free known values, as a configuration yields them (one shorter than the redactor's minimum). */
const KNOWN = [OPENAI_KEY, ANTHROPIC_KEY, CREDENTIAL, "tiny7"];

/** Pushes `deltas` one by one and flushes; returns every piece, in order. */
function stream(secrets: readonly string[], deltas: readonly string[]): string[] {
  const redactor = new StreamRedactor(secrets);
  const pieces = deltas.map((delta) => redactor.push(delta));
  pieces.push(redactor.flush());
  return pieces;
}

/** `text` cut at `offsets` (any numbers; reduced into range, sorted, repeats kept as empty deltas). */
function cut(text: string, offsets: readonly number[]): string[] {
  const points = offsets.map((offset) => offset % (text.length + 1)).sort((a, b) => a - b);
  const deltas: string[] = [];
  let previous = 0;
  for (const point of points) {
    deltas.push(text.slice(previous, point));
    previous = point;
  }
  deltas.push(text.slice(previous));
  return deltas;
}

/** Every way to cut `text` in two, three-way cuts around `focus` too. */
function* splits(text: string, focus: number): Generator<string[]> {
  for (let a = 0; a <= text.length; a++) yield [text.slice(0, a), text.slice(a)];
  for (let a = Math.max(0, focus - 8); a <= Math.min(text.length, focus + 8); a++) {
    for (let b = a; b <= Math.min(text.length, focus + 40); b++) yield [text.slice(0, a), text.slice(a, b), text.slice(b)];
  }
}

const SEPARATORS = [" ", "\n", "\t", "(", '"', ": ", "="];
const separator = fc.constantFrom(...SEPARATORS);
/** Words, punctuation, whitespace (long runs too), credential-looking prefixes and non-ASCII text, none of them a secret. */
const filler = fc.oneof(
  fc.constantFrom(" ", "\n", "\t", "\r\n", "  ", " ".repeat(70), ".", ",", "-", "_", "=", "x", "sk-", "sk", "eyJ", "ghp_", "AKIA", "é", "😀", "word", "token"),
  fc.stringMatching(/^[a-z]{1,12}$/),
  fc.stringMatching(/^[A-Za-z0-9]{1,24}$/),
  fc.string({ maxLength: 6 }),
);
/** An `sk-` key the redactor was not told about, at a token boundary. */
const skKey = fc.tuple(separator, fc.stringMatching(/^[A-Za-z0-9_-]{16,40}$/)).map(([sep, body]) => ({ text: `${sep}sk-${body}`, secret: `sk-${body}` }));
/**
 * `Bearer <token>`, after a character that cannot continue an earlier token
 * (see the test of `Bearer a=Bearer b` below); the token is the secret.
 */
const bearer = fc
  .tuple(fc.constantFrom(" ", "\n", "\t", "(", '"', ": "), fc.constantFrom(" ", "\t", "  ", " \t "), fc.stringMatching(/^[A-Za-z0-9._~+/=-]{12,40}$/))
  .map(([sep, gap, token]) => ({ text: `${sep}Bearer${gap}${token}`, secret: token }));
/** A known value; one below the redactor's minimum is planted as plain text (it is not redacted). */
const known = (secrets: readonly string[]) =>
  fc.constantFrom(...secrets).map((secret) => ({ text: secret, secret: secret.length >= MIN_KNOWN_SECRET_LENGTH ? secret : null }));

/** A text assembled from `atoms`, with the secrets it planted. */
function planted(atoms: fc.Arbitrary<{ text: string; secret: string | null }>, maxLength = 30) {
  return fc.array(atoms, { maxLength }).map((parts) => ({
    text: parts.map((part) => part.text).join(""),
    secrets: parts.flatMap((part) => (part.secret === null ? [] : [part.secret])),
  }));
}
const plain = filler.map((text) => ({ text, secret: null }));

/** Where streaming and whole-text redaction agree exactly (see the module comment). */
function agreeable(text: string): boolean {
  for (const match of text.matchAll(/bearer/gi)) {
    const at = match.index;
    // Moving the cut back to the scheme must not split a run a pattern could match.
    if (at > 0 && /[A-Za-z0-9._~+/=-]/.test(text[at - 1]!)) return false;
    if (/bearer[ \t]+$/i.test(text.slice(0, at))) return false;
    if (/^bearer\s{59,}/i.test(text.slice(at))) return false;
  }
  return true;
}

const offsets = fc.array(fc.nat(), { maxLength: 12 });

describe("StreamRedactor", () => {
  it("holds text until a whitespace boundary lies a full secret length before the end", () => {
    const redactor = new StreamRedactor([OPENAI_KEY]);
    assert.equal(redactor.push("hello world "), "");
    // 12 + 31 characters held: the boundary after "world " is now a secret length from the end.
    assert.equal(redactor.push("x".repeat(OPENAI_KEY.length)), "hello world ");
    assert.equal(redactor.flush(), "x".repeat(OPENAI_KEY.length));
    assert.equal(redactor.flush(), "", "flush empties the redactor");
    assert.equal(redactor.push("again "), "", "it is reusable after a flush");
  });

  it("never releases inside a whitespace-free run, however long, until flush", () => {
    const redactor = new StreamRedactor([OPENAI_KEY]);
    const run = "a1".repeat(200);
    for (const piece of run.match(/.{1,7}/g)!) assert.equal(redactor.push(piece), "");
    assert.equal(redactor.flush(), REDACTION_MARKER, "a long mixed run is credential-shaped");
  });

  it("without known secrets, releases up to the last whitespace", () => {
    const redactor = new StreamRedactor([]);
    assert.equal(redactor.push("one two thr"), "one two ");
    assert.equal(redactor.push("ee"), "");
    assert.equal(redactor.flush(), "three");
  });

  it("a known secret split at any point (two and three deltas) never shows", () => {
    const text = `The key is ${OPENAI_KEY} and the other one is ${CREDENTIAL}, keep them safe. More words follow here.`;
    for (const deltas of splits(text, text.indexOf(OPENAI_KEY))) {
      const pieces = stream(KNOWN, deltas);
      for (const piece of pieces) {
        assert.ok(!piece.includes(OPENAI_KEY) && !piece.includes(CREDENTIAL), JSON.stringify(deltas));
      }
      assert.equal(pieces.join(""), redactSecrets(text, KNOWN));
    }
  });

  it("keeps a Bearer scheme with its token at every split", () => {
    const token = "opaque.session.token-42";
    const text = `curl -H "Authorization: Bearer ${token}" https://example.test/v1 and then some more words to release`;
    for (const deltas of splits(text, text.indexOf("Bearer"))) {
      const pieces = stream(KNOWN, deltas);
      for (const piece of pieces) assert.ok(!piece.includes(token) && !piece.includes("opaque.sess"), JSON.stringify({ deltas, pieces }));
      assert.equal(pieces.join(""), redactSecrets(text, KNOWN));
    }
  });

  it("redacts an sk- key it was not told about, split at any point", () => {
    const key = "sk-proj-AbCdEf0123456789GhIjKl";
    const text = `export OPENAI_API_KEY=${key}\nthen run the tool with enough trailing words to release it`;
    for (const deltas of splits(text, text.indexOf(key))) {
      const pieces = stream(KNOWN, deltas);
      for (const piece of pieces) assert.ok(!piece.includes(key) && !piece.includes("sk-proj-AbCd"), JSON.stringify({ deltas, pieces }));
      assert.equal(pieces.join(""), redactSecrets(text, KNOWN));
    }
  });

  it("a secret containing whitespace is held whole across the cut", () => {
    const secret = "correct horse battery staple";
    const text = `pass: ${secret} end of the line with more words after it`;
    for (const deltas of splits(text, text.indexOf(secret))) {
      for (const piece of stream([secret], deltas)) assert.ok(!piece.includes("battery staple"), JSON.stringify(deltas));
    }
  });

  it("property: no piece and no concatenation ever holds a planted secret", () => {
    fc.assert(
      fc.property(planted(fc.oneof({ weight: 4, arbitrary: plain }, known(KNOWN), skKey, bearer)), offsets, ({ text, secrets }, points) => {
        const pieces = stream(KNOWN, cut(text, points));
        const joined = pieces.join("");
        for (const secret of [...secrets, ...KNOWN.filter((value) => value.length >= MIN_KNOWN_SECRET_LENGTH)]) {
          assert.ok(!joined.includes(secret), `concatenation leaks ${secret}`);
          for (const piece of pieces) assert.ok(!piece.includes(secret), `a piece leaks ${secret}`);
        }
      }),
      { numRuns: fuzzRuns(400) },
    );
  });

  it("property: overlapping and whitespace-bearing known secrets never leak", () => {
    const alphabet = fc.constantFrom("a", "b", " ", "\n");
    const secret = fc.array(alphabet, { minLength: MIN_KNOWN_SECRET_LENGTH, maxLength: 12 }).map((units) => units.join(""));
    fc.assert(
      fc.property(fc.array(secret, { minLength: 1, maxLength: 3 }), fc.array(fc.constantFrom("a", "b", " ", "\n", "x"), { maxLength: 80 }), offsets, (secrets, units, points) => {
        const pieces = stream(secrets, cut(units.join(""), points));
        for (const value of secrets) {
          assert.ok(!pieces.join("").includes(value));
          for (const piece of pieces) assert.ok(!piece.includes(value));
        }
      }),
      { numRuns: fuzzRuns(400) },
    );
  });

  it("property: the concatenation equals whole-text redaction wherever the two agree by construction", () => {
    fc.assert(
      fc.property(planted(fc.oneof({ weight: 4, arbitrary: plain }, known(KNOWN), skKey, bearer)), offsets, ({ text }, points) => {
        fc.pre(agreeable(text));
        assert.equal(stream(KNOWN, cut(text, points)).join(""), redactSecrets(text, KNOWN));
      }),
      { numRuns: fuzzRuns(400) },
    );
  });

  it("property: text without secrets comes out unchanged", () => {
    fc.assert(
      fc.property(fc.oneof(planted(plain), fc.string({ unit: "grapheme", maxLength: 200 }).map((text) => ({ text }))), offsets, ({ text }, points) => {
        fc.pre(redactSecrets(text, KNOWN) === text);
        assert.equal(stream(KNOWN, cut(text, points)).join(""), text);
      }),
      { numRuns: fuzzRuns(300) },
    );
  });

  it("property: short words stream out, holding back at most a secret length and a word", () => {
    const longest = Math.max(...KNOWN.map((value) => value.length));
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z]{1,10}$/), { maxLength: 60 }), offsets, (words, points) => {
        const text = words.map((word) => `${word} `).join("");
        const deltas = cut(text, points);
        const redactor = new StreamRedactor(KNOWN);
        let released = "";
        let seen = "";
        for (const delta of deltas) {
          released += redactor.push(delta);
          seen += delta;
          assert.ok(seen.startsWith(released), "released text is a prefix of what was pushed");
          assert.ok(seen.length - released.length <= longest + 11, `held ${seen.length - released.length} characters`);
        }
        assert.equal(released + redactor.flush(), text);
      }),
      { numRuns: fuzzRuns(200) },
    );
  });

  // Regression: the scheme check once looked only 64 characters back, so after a
  // long blank run the token went out alone in a delta.
  it("keeps a Bearer scheme with its token after a long blank run", () => {
    const token = "opaque.session.token-42";
    const deltas = [`Authorization: Bearer${" ".repeat(100)}`, `${token} and then some more words to move the cut along `];
    assert.ok(!redactSecrets(deltas.join(""), KNOWN).includes(token), "whole-text redaction hides it");
    for (const piece of stream(KNOWN, deltas)) assert.ok(!piece.includes(token), JSON.stringify(piece));
  });

  // Regression: a consuming pattern took "Bearer" (or "a=Bearer") as the first
  // scheme's token and left the real token after it readable.
  it("hides the token after a doubled or chained Bearer scheme", () => {
    const token = "opaque.session.token-42";
    for (const text of [`Authorization: Bearer Bearer ${token}`, `Authorization: Bearer a=Bearer ${token}`]) {
      assert.ok(!redactSecrets(text, KNOWN).includes(token), text);
      for (const piece of stream(KNOWN, [text])) assert.ok(!piece.includes(token), piece);
    }
  });

  // Regression: "Bearer" ending a longer token run once moved the release point into that run,
  // so the run's start went out alone, too short to look like a credential any more.
  it("keeps a token run that ends in Bearer whole with the token after it", () => {
    const text = "token k9X2m4N6p8Q1r3S5t7U9v2W4x6Bearer xyz and more words here to flush";
    for (const size of [1, 3, 5, 7]) {
      const deltas = text.match(new RegExp(`[\\s\\S]{1,${size}}`, "g"))!;
      assert.equal(stream(KNOWN, deltas).join(""), redactSecrets(text, KNOWN), `deltas of ${size}`);
    }
  });

  // Auth schemes are case-insensitive (RFC 9110 §11.1).
  it("hides the token after a lowercase bearer scheme", () => {
    const token = "opaque.session.token-42";
    assert.ok(!redactSecrets(`authorization: bearer ${token}`, KNOWN).includes(token));
    assert.ok(!redactSecrets(`Authorization: BEARER ${token}`, KNOWN).includes(token));
  });
});

/**
 * UTF-8 byte order for strings. The spec orders catalog choices "in UTF-8
 * byte order", which is code point order; JavaScript's default comparison is
 * UTF-16 code unit order, which puts U+10000 and above before U+E000–U+FFFF.
 *
 * @module
 */

/** Negative, zero or positive as `a` sorts before, with or after `b` in UTF-8 byte order. */
export function compareUtf8(a: string, b: string): number {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(j)!;
    if (x !== y) return x - y;
    i += x > 0xffff ? 2 : 1;
    j += y > 0xffff ? 2 : 1;
  }
  return (a.length - i) - (b.length - j);
}

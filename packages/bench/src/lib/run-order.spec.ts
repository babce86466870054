import { describe, expect, it } from "vitest";
import { roundOrder, williamsRows } from "./run-order.mjs";

/** Counts of (position, client) and of (predecessor -> client) over all rows. */
function balance(n: number) {
  const rows = williamsRows(n);
  const position = Array.from({ length: n }, () => new Array(n).fill(0));
  const follows = Array.from({ length: n }, () => new Array(n).fill(0));
  for (const row of rows) {
    expect([...row].sort((a, b) => a - b)).toEqual(Array.from({ length: n }, (_, i) => i));
    for (let pos = 0; pos < row.length; pos++) position[pos][row[pos]]++;
    for (let i = 1; i < row.length; i++) follows[row[i - 1]][row[i]]++;
  }
  return { rows, position, follows };
}

describe("williamsRows", () => {
  it.each([2, 3, 4, 5, 9, 10])(
    "n = %i: each client in each position, and after each other client, equally often",
    (n) => {
      const { rows, position, follows } = balance(n);
      expect(rows.length).toBe(n % 2 === 0 ? n : 2 * n);
      const perPosition = rows.length / n;
      for (const counts of position) expect(counts).toEqual(new Array(n).fill(perPosition));
      const perPair = n % 2 === 0 ? 1 : 2;
      for (let a = 0; a < n; a++) {
        for (let b = 0; b < n; b++) expect(follows[a][b]).toBe(a === b ? 0 : perPair);
      }
    }
  );

  it("differs from rotation: no client always follows the same one (rotation by one would)", () => {
    const clients = ["a", "b", "c"];
    const predecessors = new Set<string>();
    for (let r = 0; r < 6; r++) {
      const order = roundOrder(clients, r);
      const i = order.indexOf("b");
      if (i > 0) predecessors.add(order[i - 1]);
    }
    expect([...predecessors].sort()).toEqual(["a", "c"]);
  });

  it("a single client runs alone", () => {
    expect(williamsRows(1)).toEqual([[0]]);
    expect(roundOrder(["x"], 5)).toEqual(["x"]);
  });
});

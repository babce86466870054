/**
 * Waits (polling, capped) until every promise has settled and returns each one's state; a promise still pending
 * at the cap is reported as `"pending"` instead of failing, so a suite can count what hangs.
 */
import { waitFor } from "./servers";

/** A settled promise's result, or `"pending"` when it had not settled within the cap. */
export type SettleState<T> = PromiseSettledResult<T> | "pending";

/**
 * Settles `promises` within `capMs` milliseconds; a passing run never waits for the cap. The promises at the indexes
 * in `unawaited` are not waited for (they are meant to be pending still): each is reported in the state it is in
 * once the others have settled.
 */
export async function settleAll<T>(
  promises: Promise<T>[],
  capMs: number,
  unawaited?: ReadonlySet<number>
): Promise<SettleState<T>[]> {
  const states: SettleState<T>[] = promises.map(() => "pending");
  promises.forEach((p, i) => {
    p.then(
      (value) => {
        states[i] = { status: "fulfilled", value };
      },
      (reason) => {
        states[i] = { status: "rejected", reason };
      }
    );
  });
  const settled = (s: SettleState<T>, i: number) => s !== "pending" || unawaited?.has(i) === true;
  await waitFor(() => states.every(settled), "promises to settle", capMs).catch(() => {});
  return states;
}

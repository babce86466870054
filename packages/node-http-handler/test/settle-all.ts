/**
 * Waits (polling, capped) until every promise has settled and returns each one's state; a promise still pending
 * at the cap is reported as `"pending"` instead of failing, so a suite can count what hangs.
 */
import { waitFor } from "./servers";

/** A settled promise's result, or `"pending"` when it had not settled within the cap. */
export type SettleState<T> = PromiseSettledResult<T> | "pending";

/** Settles `promises` within `capMs` milliseconds; a passing run never waits for the cap. */
export async function settleAll<T>(promises: Promise<T>[], capMs: number): Promise<SettleState<T>[]> {
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
  await waitFor(() => states.every((s) => s !== "pending"), "promises to settle", capMs).catch(() => {});
  return states;
}

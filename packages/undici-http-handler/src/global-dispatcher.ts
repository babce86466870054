/**
 * The global undici dispatcher, as any undici copy stores it (`Symbol.for("undici.globalDispatcher.2")`, else `.1` for
 * older 7 releases and Node's bundled undici), and whether the user set it: the default `new Agent()` every copy
 * installs is recognised by shape; anything else is the user's, so when in doubt the global dispatcher is followed.
 */
import { isDispatcher } from "./resolve-undici-config";

const SLOT_2 = Symbol.for("undici.globalDispatcher.2");
const SLOT_1 = Symbol.for("undici.globalDispatcher.1");

/** What the global dispatcher slot holds now (`undefined` before any undici copy loaded). @internal */
export function globalDispatcherSlot(): unknown {
  const g = globalThis as unknown as Record<symbol, unknown>;
  return g[SLOT_2] ?? g[SLOT_1];
}

/** True for a dispatcher the user installed; false for nothing or undici's default `new Agent()`. @internal */
export function isUserSetDispatcher(value: unknown): boolean {
  return isDispatcher(value) && !isDefaultAgent(value);
}

function isDefaultAgent(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  if (proto?.constructor?.name !== "Agent") return false;
  // `agent.compose(...)` returns a Proxy of the agent whose `dispatch` runs the interceptors.
  if ((value as { dispatch?: unknown }).dispatch !== proto.dispatch) return false;
  let options: unknown;
  let factory: unknown;
  for (const key of Object.getOwnPropertySymbols(value)) {
    if (key.description === "options") options = (value as Record<symbol, unknown>)[key];
    else if (key.description === "factory") factory = (value as Record<symbol, unknown>)[key];
  }
  if (typeof options !== "object" || options === null) return false;
  if (typeof factory !== "function" || factory.name !== "defaultFactory") return false;
  for (const [key, option] of Object.entries(options)) {
    if (option === undefined) continue;
    if (key === "maxOrigins" && option === Number.POSITIVE_INFINITY) continue;
    return false;
  }
  return true;
}

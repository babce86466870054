/**
 * The global undici dispatcher, as `setGlobalDispatcher()` of any undici copy stores it, and the rule that tells a
 * dispatcher the user set (a `ProxyAgent`, an `EnvHttpProxyAgent`, a `MockAgent`, a composed dispatcher, an `Agent`
 * with options) from the default one undici installs when it loads.
 *
 * Where it lives: undici 7 and 8 store the dispatcher at `globalThis[Symbol.for("undici.globalDispatcher.2")]`;
 * older undici 7 releases and Node's bundled undici only at `…globalDispatcher.1`, where undici 8 puts a wrapper
 * for the legacy handler API. `.2` is read first, so an undici 8 dispatcher is used directly.
 *
 * The default: every undici copy (the package, Node's bundled one) installs `new Agent()` on load when the slot is
 * empty, so the slot is never empty once undici is loaded. That default carries no setting of the user's; the
 * handler then keeps its own `Agent` (per-origin `maxSockets`, the agent options, full telemetry). It is recognised
 * by shape: an instance of a class named `Agent` whose construction options are all unset (undici keeps them under
 * its own `options` symbol), whose factory is undici's default and whose `dispatch` is the class's own (not
 * `agent.compose(...)`, which returns a Proxy of the agent with interceptors in `dispatch`). Anything else counts as set by the user,
 * including a dispatcher whose shape cannot be read: when in doubt the global dispatcher is followed, never
 * bypassed.
 *
 * Cost: `globalDispatcherSlot()` is two property reads (checked per request, so a dispatcher set later is followed
 * from the next request on); `isUserSetDispatcher()` runs only when the slot changed.
 */
import { isDispatcher } from "./resolve-undici-config";

const SLOT_2 = Symbol.for("undici.globalDispatcher.2");
const SLOT_1 = Symbol.for("undici.globalDispatcher.1");

/** What the global dispatcher slot holds now (`undefined` before any undici copy loaded). @internal */
export function globalDispatcherSlot(): unknown {
  const g = globalThis as unknown as Record<symbol, unknown>;
  return g[SLOT_2] ?? g[SLOT_1];
}

/**
 * True when `value` is a dispatcher the user installed, false for nothing or for the default `new Agent()` an undici
 * copy installs on load.
 * @internal
 */
export function isUserSetDispatcher(value: unknown): boolean {
  if (!isDispatcher(value)) return false;
  return !isDefaultAgent(value);
}

/** An undici `Agent` constructed with no options and the default factory (see the header). */
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

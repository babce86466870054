export { UndiciHttpHandler } from "./undici-http-handler";
export type { UndiciHttpHandlerOptions } from "./undici-http-handler-options";
export { UndiciPoolMonitor } from "./undici-pool-monitor";
export type { DispatcherLike } from "./dispatcher-like";

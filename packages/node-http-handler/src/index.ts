export { DEFAULT_REQUEST_TIMEOUT } from "./constants";
export { NodeHttpHandler } from "./node-http-handler";
export type { NodeHttpHandlerOptions } from "./node-http-handler-options";
export { SOCKET_MONITOR_ENV, type SocketMonitorMode } from "./socket-monitor-mode";
export { streamCollector } from "./stream-collector";

import type { buildConnector } from "undici";

/**
 * A connector that opens every TLS connection with `servername` (SNI and certificate check), as
 * `httpsAgent.servername` does on `NodeHttpHandler`: undici's own applies only to requests to an IP address. @internal
 */
export function pinServername(connector: buildConnector.connector, servername: string): buildConnector.connector {
  return function connect(options, callback) {
    return connector({ ...options, servername }, callback);
  } as buildConnector.connector;
}

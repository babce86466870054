import type { buildConnector } from "undici";

/**
 * Returns a connector that opens every TLS connection with `servername`, as `httpsAgent.servername` does on
 * `NodeHttpHandler` (the SNI name and the name the certificate is checked against), whatever host the request names.
 * undici's own `connect.servername` applies only to requests to an IP address: for a DNS name it sends the request's
 * host name instead, so a `servername` the certificate does not cover would be accepted. One closure per pool, none per
 * request.
 * @internal
 */
export function pinServername(connector: buildConnector.connector, servername: string): buildConnector.connector {
  return function connect(options, callback) {
    return connector({ ...options, servername }, callback);
  } as buildConnector.connector;
}

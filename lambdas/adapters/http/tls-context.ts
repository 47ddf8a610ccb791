/**
 * One TLS client context for every connection this process opens to a target. Without one,
 * `tls.connect` builds a new SecureContext for each connection (Node's `_tls_wrap` connect():
 * `options.secureContext || tls.createSecureContext(options)`), work repeated on the event loop
 * at every handshake while a lane fires; a shared context trusts the same roots (Node's
 * default store, NODE_EXTRA_CA_CERTS included) and verifies as each would have.
 */
import { createSecureContext, type SecureContext } from 'node:tls';

let shared: SecureContext | null = null;

/** The process's client context for targets (made at first use). */
export function clientTlsContext(): SecureContext {
  shared ??= createSecureContext();
  return shared;
}

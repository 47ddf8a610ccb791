/**
 * A self-signed RSA-2048 certificate for 127.0.0.1 (openssl), for the benchmarks' TLS servers;
 * the clients trust it through NODE_EXTRA_CA_CERTS, as they trust a real endpoint's.
 */
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/** Writes cert.pem and key.pem into `dir`. */
export function selfSignedCertificate(dir: string): { cert: string; key: string } {
  const cert = join(dir, 'cert.pem');
  const key = join(dir, 'key.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}

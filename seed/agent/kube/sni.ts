/**
 * The server name (SNI) of a TLS ClientHello, read from the first bytes a client sends: what a
 * TLS-passthrough load balancer routes by without terminating TLS (as Gardener's Istio ingress routes
 * each shoot's API domain to its kube-apiserver). `incomplete` asks for more bytes; `none` is a hello
 * without the extension (or not TLS at all).
 */
export type SniResult = { kind: 'name'; name: string } | { kind: 'incomplete' } | { kind: 'none' };

const HANDSHAKE = 0x16;
const CLIENT_HELLO = 0x01;
const SERVER_NAME = 0x0000;
/** A ClientHello larger than one record is legal but never sent by client-go or Node; the limit guards memory. */
export const MAX_HELLO_BYTES = 16_384 + 5;

export function readSni(buffer: Buffer): SniResult {
  if (buffer.length < 5) return { kind: 'incomplete' };
  if (buffer[0] !== HANDSHAKE) return { kind: 'none' };
  const recordLength = buffer.readUInt16BE(3);
  if (buffer.length < 5 + recordLength)
    return buffer.length >= MAX_HELLO_BYTES ? { kind: 'none' } : { kind: 'incomplete' };
  const hello = buffer.subarray(5, 5 + recordLength);
  try {
    return parseHello(hello);
  } catch {
    // A truncated or malformed hello: nothing to route by.
    return { kind: 'none' };
  }
}

function parseHello(hello: Buffer): SniResult {
  let at = 0;
  const need = (n: number) => {
    if (at + n > hello.length) throw new RangeError('short');
  };
  need(4);
  if (hello[at] !== CLIENT_HELLO) return { kind: 'none' };
  at += 4; // type, 24-bit length
  need(2 + 32);
  at += 2 + 32; // client_version, random
  need(1);
  at += 1 + hello[at]!; // session_id
  need(2);
  at += 2 + hello.readUInt16BE(at); // cipher_suites
  need(1);
  at += 1 + hello[at]!; // compression_methods
  if (at + 2 > hello.length) return { kind: 'none' };
  const end = at + 2 + hello.readUInt16BE(at);
  at += 2;
  while (at + 4 <= end) {
    const type = hello.readUInt16BE(at);
    const length = hello.readUInt16BE(at + 2);
    at += 4;
    if (type === SERVER_NAME) {
      need(length);
      let p = at + 2; // server_name_list length
      while (p + 3 <= at + length) {
        const nameType = hello[p]!;
        const nameLength = hello.readUInt16BE(p + 1);
        p += 3;
        if (nameType === 0) return { kind: 'name', name: hello.toString('ascii', p, p + nameLength).toLowerCase() };
        p += nameLength;
      }
      return { kind: 'none' };
    }
    at += length;
  }
  return { kind: 'none' };
}

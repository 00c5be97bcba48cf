/**
 * The service tunnel's wire format: one binary WebSocket message per frame,
 *   [type: u8][stream: u32 BE][payload]
 * Stream 0 carries the worker's readiness and its readiness-check counts; each proxied request is its own stream. Bodies
 * are flow-controlled per stream: a side may have at most WINDOW body bytes that the other
 * has not acknowledged with CREDIT (sent once they were written on downstream), so a slow
 * client or a slow app holds back only its own stream, and memory stays bounded.
 * The API keeps its own copy of this file (api/src/http/tunnelFrames.ts): no code is shared
 * between api and worker; the two must stay byte-compatible.
 */
export const FRAME = {
  REQ_HEAD: 1, // API → worker: JSON {method, path, headers}
  REQ_BODY: 2,
  REQ_END: 3,
  RES_HEAD: 4, // worker → API: JSON {status, headers}
  RES_BODY: 5,
  RES_END: 6,
  RESET: 7, // either way: JSON {message}; the stream is over
  CREDIT: 8, // either way: u32 bytes written downstream
  READY: 9, // worker → API, stream 0: JSON {ready, detail}
  CHECKS: 10, // worker → API, stream 0: JSON {checks, failures} readiness checks since the last CHECKS (an older API ignores it)
} as const;

/** Unacknowledged body bytes allowed per stream and direction. */
export const WINDOW = 256 * 1024;

export function encodeFrame(type: number, stream: number, payload?: Buffer | string | object): Buffer {
  const body =
    payload === undefined
      ? Buffer.alloc(0)
      : Buffer.isBuffer(payload)
        ? payload
        : Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload));
  const head = Buffer.alloc(5);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(stream, 1);
  return Buffer.concat([head, body]);
}

export function creditFrame(stream: number, bytes: number): Buffer {
  const b = Buffer.alloc(9);
  b.writeUInt8(FRAME.CREDIT, 0);
  b.writeUInt32BE(stream, 1);
  b.writeUInt32BE(bytes, 5);
  return b;
}

export function decodeFrame(data: Buffer): { type: number; stream: number; payload: Buffer } | null {
  if (data.length < 5) return null;
  return { type: data.readUInt8(0), stream: data.readUInt32BE(1), payload: data.subarray(5) };
}

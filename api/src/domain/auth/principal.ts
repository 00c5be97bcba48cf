/** Who is calling, computed once per request from its bearer token. */
export type Principal =
  | { kind: 'anonymous' }
  | {
      kind: 'user';
      userId: string;
      tokenId: string;
      /** Listed in CHATGPU_OPERATORS: sees the whole network's preparation records. */ operator: boolean;
    }
  | { kind: 'worker'; userId: string; workerTokenId: string };

export const anonymous: Principal = { kind: 'anonymous' };

import type { Principal } from '../domain/auth/principal.js';
import type { Resources } from '../domain/resources.js';
import type { PubSub } from './pubsub.js';

/** Per-request context: the resources plus who is calling (computed once). */
export interface Context extends Resources {
  principal: Principal;
  pubsub: PubSub;
  /** Aborted when the client goes away (ends long-polls early). */
  signal?: AbortSignal;
}

import type { Config } from '../config.js';
import type { Prisma } from '../db/client.js';
import type { BlobStore } from './blobs/blobStore.js';
import type { EventSink } from './events.js';

export interface Logger {
  info(msg: string, data?: Record<string, unknown>): void;
  warn(msg: string, data?: Record<string, unknown>): void;
  error(msg: string, data?: Record<string, unknown>): void;
}

/** What every use case may touch, passed in explicitly (never read from globals). */
export interface Resources {
  prisma: Prisma;
  events: EventSink;
  blobs: BlobStore;
  config: Config;
  log: Logger;
  now(): Date;
  /** The URL clients reach this API at (CHATGPU_PUBLIC_URL, else the bound port on localhost). */
  baseUrl?: string;
  /** Where services answer browsers: `<slug>.<this host>` (serviceOrigin.ts); set once the API listens. */
  serviceBase?: URL;
  /**
   * Settles when a worker this process is starting (the embedded default's local worker) is online,
   * or gives up: a planner that finds no worker online waits for it (bounded) instead of planning
   * for hardware that is not there.
   */
  workerStarting?: Promise<void>;
}

export const consoleLogger: Logger = {
  info: (m, d) => console.log(m, d ? JSON.stringify(d) : ''),
  warn: (m, d) => console.warn(m, d ? JSON.stringify(d) : ''),
  error: (m, d) => console.error(m, d ? JSON.stringify(d) : ''),
};

export const silentLogger: Logger = { info: () => {}, warn: () => {}, error: () => {} };

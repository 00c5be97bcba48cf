/** The planted lying worker of the trust tests: see bench/lib/lyingWorker.ts. */
export { lyingWorkerCheckout } from '../../../bench/lib/lyingWorker.js';

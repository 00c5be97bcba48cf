/**
 * Two API hosts (this process and a real `npm start` process, different data folders) on one
 * PostgreSQL and the s3 blob store: workers, downloads and a host killed mid-upload
 * (helpers/multiHost.ts holds the scenarios every shared backend passes).
 */
import { multiHostSuite, startMultiHost } from './helpers/multiHost.js';

multiHostSuite(await startMultiHost('s3'));

/**
 * Child-process entry: an S3-compatible server (s3rver, pure JS) on 127.0.0.1 serving one
 * bucket from a folder, for benchmarks. Its own process, so its work does not share the
 * benchmark client's event loop. Prints `listening <port>`; exits on SIGTERM.
 */
import S3rver from 's3rver';

const [dir, bucket] = process.argv.slice(2);
if (!dir || !bucket) throw new Error('usage: s3ServerProcess.ts DIR BUCKET');
const server = new S3rver({ port: 0, address: '127.0.0.1', silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
const { port } = await server.run();
console.log(`listening ${port}`);
process.on('SIGTERM', () => void server.close().finally(() => process.exit(0)));

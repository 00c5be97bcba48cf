/** Imports every type and builds the schema. */
import { lexicographicSortSchema, printSchema } from 'graphql';
import { builder } from './builder.js';
import './types/scalars.js';
import './types/errors.js';
import './types/User.js';
import './types/Job.js';
import './types/Task.js';
import './types/Service.js';
import './types/PreparationRecord.js';
import './types/ShardGroup.js';
import './types/Worker.js';
import './types/Trust.js';
import './types/WorkerProtocol.js';
import './types/Subscription.js';

builder.queryType({});
builder.mutationType({});

export const schema = builder.toSchema({ sortSchema: true });

/** The SDL committed as schema.graphql (sorted, so diffs are stable). */
export function printSdl(): string {
  return printSchema(lexicographicSortSchema(schema)) + '\n';
}

/**
 * Every document the dashboard sends stays within the API's depth and cost limits at the
 * page sizes it uses (a too-costly query is refused as a whole, so this is a correctness
 * test, not a performance one). Fast: no server, no browser.
 */
import { print } from 'graphql';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../api/src/config.js';
import { schema } from '../../api/src/graphql/index.js';
import { checkLimits } from '../../api/src/graphql/limits.js';
import * as docs from '../src/gql/graphql.js';
import { LOG_PAGE, METRIC_PAGE } from '../src/features/jobs/pageSizes.js';

const limits = loadConfig({}).graphql;

// The largest variables each operation is sent with.
const variables: Record<string, Record<string, unknown>> = {
  AttemptLogPage: { first: LOG_PAGE },
  AttemptMetricPage: { first: METRIC_PAGE },
  JobEvents: { first: 500 },
  Jobs: { first: 20 },
  Workers: { first: 25 },
};

describe('dashboard documents', () => {
  const all = Object.entries(docs).filter(([name]) => name.endsWith('Document')) as [string, Parameters<typeof print>[0]][];
  it('has documents to check', () => expect(all.length).toBeGreaterThan(15));
  for (const [name, doc] of all) {
    const op = name.replace(/(Query|Mutation|Subscription|Fragment)?Document$/, '');
    it(`${op} is within the API's limits`, () => {
      const err = checkLimits(schema, doc as never, variables[op] ?? {}, undefined, limits);
      expect(err?.message ?? null).toBeNull();
    });
  }
});

/**
 * Every document the dashboard sends stays within the API's depth and cost limits at the
 * page sizes it uses (a too-costly query is refused as a whole, so this is a correctness
 * test, not a performance one). Documents are checked as Apollo Client sends them, with
 * `__typename` added to every selection set (the API's cost counts it like any field).
 * Fast: no server, no browser.
 */
import { addTypenameToDocument } from '@apollo/client/utilities';
import {
  getNamedType,
  GraphQLEnumType,
  GraphQLInputObjectType,
  GraphQLList,
  GraphQLNonNull,
  Kind,
  typeFromAST,
  type DocumentNode,
  type GraphQLInputType,
} from 'graphql';
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
  const all = Object.entries(docs).filter(([name]) => name.endsWith('Document')) as [string, DocumentNode][];
  it('has documents to check', () => expect(all.length).toBeGreaterThan(15));
  it('pages history in large pages (the attempt field, not nested lists)', () => {
    expect(LOG_PAGE).toBeGreaterThanOrEqual(5_000);
    expect(METRIC_PAGE).toBeGreaterThanOrEqual(5_000);
  });
  for (const [name, doc] of all) {
    const op = name.replace(/(Query|Mutation|Subscription|Fragment)?Document$/, '');
    it(`${op} is within the API's limits`, () => {
      const sent = addTypenameToDocument(doc);
      const err = checkLimits(schema, sent, { ...required(doc), ...variables[op] }, undefined, limits);
      expect(err?.message ?? null).toBeNull();
    });
  }
});

/** Minimal values for the required variables (cost does not depend on them). */
function required(doc: DocumentNode): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const def of doc.definitions) {
    if (def.kind !== Kind.OPERATION_DEFINITION) continue;
    for (const v of def.variableDefinitions ?? []) {
      const type = typeFromAST(schema, v.type as never) as GraphQLInputType | undefined;
      if (type instanceof GraphQLNonNull) out[v.variable.name.value] = sample(type);
    }
  }
  return out;
}

function sample(type: GraphQLInputType): unknown {
  if (type instanceof GraphQLNonNull) return sample(type.ofType);
  if (type instanceof GraphQLList) return [];
  const named = getNamedType(type);
  if (named instanceof GraphQLInputObjectType) {
    const o: Record<string, unknown> = {};
    for (const f of Object.values(named.getFields())) if (f.type instanceof GraphQLNonNull) o[f.name] = sample(f.type);
    return o;
  }
  if (named instanceof GraphQLEnumType) return named.getValues()[0]!.value;
  return { Int: 1, Float: 1, Boolean: true }[named.name] ?? 'x';
}

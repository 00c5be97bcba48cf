/**
 * Query depth and cost limits, checked before execution (HTTP and WebSocket alike).
 * Cost: each field costs 1 plus its children; a list or connection multiplies its
 * children by its `first` argument (or 20 when unbounded). Depth: nesting of fields,
 * fragments expanded, introspection included.
 */
import {
  type DocumentNode,
  type FragmentDefinitionNode,
  getNamedType,
  getNullableType,
  GraphQLError,
  GraphQLList,
  type GraphQLSchema,
  Kind,
  type SelectionSetNode,
} from 'graphql';
import { getComplexity } from 'graphql-query-complexity';
import { refuseNulInput } from './refuseNulInput.js';

/**
 * A refusal here is the client's error: HTTP 400 (Apollo Server reads `extensions.http` and
 * drops it from the answer). Without it a request refused before execution is a 500.
 */
const BAD_REQUEST = { status: 400 };

export interface Limits {
  maxDepth: number;
  maxCost: number;
}

export function checkLimits(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined | null,
  limits: Limits,
): GraphQLError | null {
  // Input PostgreSQL cannot store, refused here because every request passes here first.
  const nul = refuseNulInput(schema, document, variables, operationName);
  if (nul) return nul;
  const depth = maxDepth(document);
  if (depth > limits.maxDepth) {
    return new GraphQLError(`Query is too deep: ${depth} levels, the limit is ${limits.maxDepth}.`, {
      extensions: { code: 'QUERY_TOO_DEEP', depth, maxDepth: limits.maxDepth, http: BAD_REQUEST },
    });
  }
  let cost: number;
  try {
    cost = getComplexity({
      schema,
      query: document,
      variables: variables ?? {},
      ...(operationName ? { operationName } : {}),
      estimators: [
        ({ type: parent, field, args, childComplexity }) => {
          if (field.name === '__typename') return 0; // clients add it everywhere; it costs nothing
          const type = getNullableType(field.type);
          // A connection multiplies by its page size once; its `edges` list does not again.
          const isList =
            !parent.name.endsWith('Connection') &&
            (type instanceof GraphQLList || getNamedType(type).name.endsWith('Connection'));
          const first = typeof args.first === 'number' ? args.first : typeof args.last === 'number' ? args.last : 20;
          return 1 + childComplexity * (isList ? Math.max(first, 1) : 1);
        },
      ],
    });
  } catch (err) {
    // Variables that do not fit their types (the cost needs their values): the client's error.
    return new GraphQLError((err as Error).message, { extensions: { code: 'BAD_USER_INPUT', http: BAD_REQUEST } });
  }
  if (cost > limits.maxCost) {
    return new GraphQLError(`Query is too expensive: cost ${cost}, the limit is ${limits.maxCost}.`, {
      extensions: { code: 'QUERY_TOO_COSTLY', cost, maxCost: limits.maxCost, http: BAD_REQUEST },
    });
  }
  return null;
}

export function maxDepth(document: DocumentNode): number {
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const walk = (set: SelectionSetNode | undefined, depth: number, seen: Set<string>): number => {
    if (!set) return depth;
    let max = depth;
    for (const s of set.selections) {
      if (s.kind === Kind.FIELD) max = Math.max(max, walk(s.selectionSet, depth + 1, seen));
      else if (s.kind === Kind.INLINE_FRAGMENT) max = Math.max(max, walk(s.selectionSet, depth, seen));
      else if (!seen.has(s.name.value)) {
        const f = fragments.get(s.name.value);
        max = Math.max(max, walk(f?.selectionSet, depth, new Set([...seen, s.name.value])));
      }
    }
    return max;
  };
  let max = 0;
  for (const d of document.definitions) if (d.kind === Kind.OPERATION_DEFINITION) max = Math.max(max, walk(d.selectionSet, 0, new Set()));
  return max;
}

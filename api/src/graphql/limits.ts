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
  type ValueNode,
  visit,
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
  const fixed = fixedShape(document, operationName);
  const depth = fixed.depth;
  if (depth > limits.maxDepth) {
    return new GraphQLError(`Query is too deep: ${depth} levels, the limit is ${limits.maxDepth}.`, {
      extensions: { code: 'QUERY_TOO_DEEP', depth, maxDepth: limits.maxDepth, http: BAD_REQUEST },
    });
  }
  let cost: number;
  if (fixed.cost !== undefined) cost = fixed.cost;
  else {
    try {
      cost = costOf(schema, document, variables ?? {}, operationName);
    } catch (err) {
      // Variables that do not fit their types (the cost needs their values): the client's error.
      return new GraphQLError((err as Error).message, { extensions: { code: 'BAD_USER_INPUT', http: BAD_REQUEST } });
    }
    // The cost reads no variable: the next request with this document (Apollo Server hands
    // the same parsed document to every request with the same text) skips the walk.
    if (fixed.costFixed) fixed.cost = cost;
  }
  if (cost > limits.maxCost) {
    return new GraphQLError(`Query is too expensive: cost ${cost}, the limit is ${limits.maxCost}.`, {
      extensions: { code: 'QUERY_TOO_COSTLY', cost, maxCost: limits.maxCost, http: BAD_REQUEST },
    });
  }
  return null;
}

/**
 * What a document's limits need that no variable changes, kept per parsed document and
 * operation: its depth, and its cost once computed when the cost reads no variable (no
 * variable in a `first`/`last` argument or a directive). A worker's heartbeat, claim and
 * completion documents are the same text on every call: their depth and cost are walked once
 * per API process instead of per call (bench/heartbeats.ts).
 */
interface FixedShape {
  depth: number;
  costFixed: boolean;
  cost?: number;
}
const shapes = new WeakMap<DocumentNode, Map<string, FixedShape>>();

function fixedShape(document: DocumentNode, operationName: string | undefined | null): FixedShape {
  let byOp = shapes.get(document);
  if (!byOp) shapes.set(document, (byOp = new Map()));
  const key = operationName ?? '';
  let shape = byOp.get(key);
  if (!shape) byOp.set(key, (shape = { depth: maxDepth(document), costFixed: !costReadsVariables(document) }));
  return shape;
}

/** Whether a variable can change the cost: one in a `first`/`last` argument, or in a directive (@include/@skip). */
function costReadsVariables(document: DocumentNode): boolean {
  let reads = false;
  visit(document, {
    Argument(node) {
      if ((node.name.value === 'first' || node.name.value === 'last') && hasVariable(node.value)) reads = true;
    },
    Directive(node) {
      if ((node.arguments ?? []).some((a) => hasVariable(a.value))) reads = true;
    },
  });
  return reads;
}

function hasVariable(value: ValueNode): boolean {
  if (value.kind === Kind.VARIABLE) return true;
  if (value.kind === Kind.LIST) return value.values.some(hasVariable);
  if (value.kind === Kind.OBJECT) return value.fields.some((f) => hasVariable(f.value));
  return false;
}

function costOf(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown>,
  operationName: string | undefined | null,
): number {
  return getComplexity({
    schema,
    query: document,
    variables,
    ...(operationName ? { operationName } : {}),
    estimators: [
      ({ type: parent, field, args, childComplexity }) => {
        if (field.name === '__typename') return 0; // clients add it everywhere; it costs nothing
        const type = getNullableType(field.type);
        // A connection multiplies by its page size once; its `edges` list does not again.
        const isList =
          !parent.name.endsWith('Connection') && (type instanceof GraphQLList || getNamedType(type).name.endsWith('Connection'));
        const first = typeof args.first === 'number' ? args.first : typeof args.last === 'number' ? args.last : 20;
        return 1 + childComplexity * (isList ? Math.max(first, 1) : 1);
      },
    ],
  });
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

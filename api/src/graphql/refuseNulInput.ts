/**
 * PostgreSQL's text and jsonb values cannot hold the NUL character (\u0000): a string input
 * carrying one would fail its write as an internal error (after other writes of the same
 * request, for some). It is refused before execution instead, typed (BAD_USER_INPUT, HTTP
 * 400), naming the variable. Walked along the operation's variable types: String and ID
 * values only. JSON scalars refuse NUL themselves (types/scalars.ts); the LogLines scalar is
 * not walked, since a program's output may hold NUL characters and the domain removes them
 * (domain/leases/reports.ts).
 */
import {
  GraphQLError,
  isInputObjectType,
  isListType,
  isNonNullType,
  isScalarType,
  Kind,
  typeFromAST,
  type DocumentNode,
  type GraphQLInputType,
  type GraphQLSchema,
} from 'graphql';

export function refuseNulInput(
  schema: GraphQLSchema,
  document: DocumentNode,
  variables: Record<string, unknown> | undefined,
  operationName: string | undefined | null,
): GraphQLError | null {
  // Almost every request holds no NUL at all: the typed walk (which names the variable) only then.
  if (!variables || !holdsNul(variables)) return null;
  const op = document.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION && (!operationName || d.name?.value === operationName));
  if (!op || op.kind !== Kind.OPERATION_DEFINITION) return null;
  for (const def of op.variableDefinitions ?? []) {
    const type = typeFromAST(schema, def.type as never) as GraphQLInputType | undefined;
    const name = def.variable.name.value;
    const at = type ? findNul(type, variables[name], `$${name}`) : null;
    if (at) {
      return new GraphQLError(`Variable ${at} contains the NUL character (\\u0000), which cannot be stored.`, {
        extensions: { code: 'BAD_USER_INPUT', http: { status: 400 } },
      });
    }
  }
  return null;
}

/** The path of the first string holding a NUL, or null. Values that do not fit their type are left to coercion. */
function findNul(type: GraphQLInputType, value: unknown, path: string): string | null {
  if (value === null || value === undefined) return null;
  if (isNonNullType(type)) return findNul(type.ofType, value, path);
  if (isListType(type)) {
    const items = Array.isArray(value) ? value : [value];
    for (let i = 0; i < items.length; i++) {
      const at = findNul(type.ofType, items[i], `${path}[${i}]`);
      if (at) return at;
    }
    return null;
  }
  if (isInputObjectType(type)) {
    if (typeof value !== 'object') return null;
    const fields = type.getFields();
    for (const [k, v] of Object.entries(value)) {
      const f = fields[k];
      if (!f) continue;
      const at = findNul(f.type, v, `${path}.${k}`);
      if (at) return at;
    }
    return null;
  }
  if (isScalarType(type) && (type.name === 'String' || type.name === 'ID') && typeof value === 'string' && value.includes('\u0000'))
    return path;
  return null;
}

/** Whether any string in a JSON value (keys included) holds a NUL. */
function holdsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(holdsNul);
  if (value !== null && typeof value === 'object') {
    for (const k in value) if (k.includes('\u0000') || holdsNul((value as Record<string, unknown>)[k])) return true;
  }
  return false;
}

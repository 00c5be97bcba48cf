/**
 * Prisma's schema engine, run as WebAssembly (the native engine cannot be downloaded
 * on machines without internet). Used only by development tooling and tests: to write
 * a new migration (`npm run migration:new`) and to prove that prisma/migrations
 * reproduce prisma/schema.prisma exactly.
 *
 * The package's ESM entry imports a `.wasm` file, which Node 20 only allows behind
 * `--experimental-wasm-modules`, so we instantiate the module ourselves and hand it
 * to the wasm-bindgen glue.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { bindMigrationAwareSqlAdapterFactory } from '@prisma/driver-adapter-utils';
import { PrismaPg } from '@prisma/adapter-pg';

const require = createRequire(import.meta.url);

type Engine = {
  diff(params: unknown): Promise<{ exitCode: number; stdout: string | null }>;
  free(): void;
};

let glue: Promise<{ SchemaEngine: { new (...a: never[]): never; new: (...a: unknown[]) => Promise<Engine> } }> | undefined;

async function loadGlue() {
  glue ??= (async () => {
    const dir = path.dirname(require.resolve('@prisma/schema-engine-wasm/schema_engine_bg'));
    const bg: Record<string, unknown> & { __wbg_set_wasm(x: unknown): void } = await import(path.join(dir, 'schema_engine_bg.js'));
    const bytes = await readFile(path.join(dir, 'schema_engine_bg.wasm'));
    const { instance } = await WebAssembly.instantiate(bytes, { './schema_engine_bg.js': bg as never });
    bg.__wbg_set_wasm(instance.exports);
    (instance.exports as { __wbindgen_start?: () => void }).__wbindgen_start?.();
    return bg as never;
  })();
  return glue;
}

const noFilters = { externalTables: [], externalEnums: [] };

export async function withSchemaEngine<T>(connectionString: string, fn: (engine: Engine) => Promise<T>): Promise<T> {
  const { SchemaEngine } = await loadGlue();
  const factory = bindMigrationAwareSqlAdapterFactory(new PrismaPg({ connectionString }) as never);
  const engine = await SchemaEngine.new({ datamodels: undefined }, () => {}, factory);
  try {
    return await fn(engine);
  } finally {
    engine.free();
  }
}

/**
 * SQL that takes a database shaped by the datamodel `from` (or an empty one) to the
 * datamodel `to`. Datamodel-to-datamodel, so no database is introspected: the wasm
 * engine cannot read some catalog column types through the `pg` adapter.
 */
export async function diffSql(
  connectionString: string,
  from: { path: string; content: string } | null,
  to: { path: string; content: string },
): Promise<string> {
  return withSchemaEngine(connectionString, async (engine) => {
    const result = await engine.diff({
      from: from ? { tag: 'schemaDatamodel', files: [from] } : { tag: 'empty' },
      to: { tag: 'schemaDatamodel', files: [to] },
      script: true,
      exitCode: null,
      filters: noFilters,
    });
    return result.stdout ?? '';
  });
}

import { defineConfig } from 'prisma/config';

// Prisma 7 reads no .env and needs no URL to generate; migrations are applied by
// api/src/db/migrate.ts (Prisma's migrate commands need a native engine download).
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
});

-- AlterEnum
ALTER TYPE "TaskKind" ADD VALUE 'MERGE';

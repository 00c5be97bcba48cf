import type { Resources } from '../resources.js';

/** The last lines an attempt wrote to stderr, as a sentence to append to a failure reason ('' when none). */
export async function lastErrorOutput(r: Pick<Resources, 'prisma'>, attemptId: string | null): Promise<string> {
  if (!attemptId) return '';
  const tail = await r.prisma.logChunk.findMany({ where: { attemptId, stream: 'stderr' }, orderBy: { seq: 'desc' }, take: 3 });
  const text = tail
    .reverse()
    .map((l) => l.text)
    .join(' | ');
  return text ? ` Last error output: ${text.slice(0, 500)}` : '';
}

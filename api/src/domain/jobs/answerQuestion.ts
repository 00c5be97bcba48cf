import { isUuid } from '../ids.js';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Resources } from '../resources.js';
import { recordJobEvent } from './jobEvents.js';


/**
 * Records the user's answer to an open question. When no question stays open, a job
 * waiting in NEEDS_INPUT goes back to PLANNING (the planner resumes from its saved
 * history; see agents/).
 */
export async function answerQuestion(r: Resources, userId: string, questionId: string, answer: string) {
  if (!isUuid(questionId)) throw new NotFoundError('Question', questionId.slice(0, 80));
  const now = r.now();
  const { question, events, resumed } = await r.prisma.$transaction(async (tx) => {
    const q = await tx.question.findFirst({ where: { id: questionId, job: { ownerId: userId } } });
    if (!q) throw new NotFoundError('Question', questionId);
    const res = await tx.question.updateMany({
      where: { id: q.id, status: 'OPEN' },
      data: { status: 'ANSWERED', answer: answer.trim(), answeredAt: now },
    });
    if (res.count === 0) throw new ConflictError(`This question is already ${q.status.toLowerCase()}.`);
    const events = [await recordJobEvent(tx, q.jobId, 'question.answered', { questionId: q.id, answer: answer.trim() })];
    const open = await tx.question.count({ where: { jobId: q.jobId, status: 'OPEN' } });
    let resumed = false;
    if (open === 0) {
      const moved = await tx.job.updateMany({
        where: { id: q.jobId, status: 'NEEDS_INPUT' },
        data: { status: 'PLANNING', statusReason: null },
      });
      if (moved.count > 0) {
        resumed = true;
        events.push(await recordJobEvent(tx, q.jobId, 'job.status', { status: 'PLANNING' }));
      }
    }
    return { question: { ...q, status: 'ANSWERED' as const }, events, resumed };
  });
  for (const eventId of events) await r.events.emit({ type: 'job.event', jobId: question.jobId, eventId });
  await r.events.emit({ type: 'job.updated', jobId: question.jobId });
  if (resumed) await r.hooks?.planningResumed?.(question.jobId);
  return question;
}

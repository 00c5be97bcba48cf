import { isUuid } from '../ids.js';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Resources } from '../resources.js';
import { recordJobEvent } from './jobEvents.js';
import { applyTransition, publishJobEvents } from './jobLifecycle.js';

/**
 * Records the user's answer to an open question. When no question stays open, a job
 * waiting in NEEDS_INPUT goes back to PLANNING (resumePlanning) — or to RUNNING
 * (resumeRun) when the run supervisor asked — and `question.answered` tells that agent to
 * continue from its saved history.
 */
export async function answerQuestion(r: Resources, userId: string, questionId: string, answer: string) {
  if (!isUuid(questionId)) throw new NotFoundError('Question', questionId.slice(0, 80));
  const now = r.now();
  const { question, eventIds, resumed, agent } = await r.prisma.$transaction(async (tx) => {
    const q = await tx.question.findFirst({ where: { id: questionId, job: { ownerId: userId } } });
    if (!q) throw new NotFoundError('Question', questionId);
    const res = await tx.question.updateMany({
      where: { id: q.id, status: 'OPEN' },
      data: { status: 'ANSWERED', answer: answer.trim(), answeredAt: now },
    });
    if (res.count === 0) throw new ConflictError(`This question is already ${q.status.toLowerCase()}.`);
    const eventIds = [await recordJobEvent(tx, q.jobId, 'question.answered', { questionId: q.id, answer: answer.trim() })];
    const open = await tx.question.count({ where: { jobId: q.jobId, status: 'OPEN' } });
    const job = await tx.job.findUniqueOrThrow({ where: { id: q.jobId }, select: { status: true } });
    let resumed = false;
    // Who asked: the run supervisor's question resumes the run, the planner's the planning.
    const asker = q.agentRunId ? (await tx.agentRun.findUnique({ where: { id: q.agentRunId }, select: { agent: true } }))?.agent : undefined;
    const agent = asker === 'supervisor' ? ('supervisor' as const) : ('planner' as const);
    if (open === 0 && job.status === 'NEEDS_INPUT') {
      const t =
        agent === 'supervisor'
          ? await applyTransition(tx, now, q.jobId, 'resumeRun', { reason: 'The run supervisor is reading your answer.' })
          : await applyTransition(tx, now, q.jobId, 'resumePlanning', { reason: 'The planner is reading your answer.' });
      eventIds.push(...t.eventIds);
      resumed = true;
    }
    return { question: { ...q, status: 'ANSWERED' as const }, eventIds, resumed, agent };
  });
  await publishJobEvents(r, question.jobId, eventIds);
  await r.events.emit({ type: 'question.answered', jobId: question.jobId, questionId: question.id, resumed, agent });
  return question;
}

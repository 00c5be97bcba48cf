import { isUuid } from '../ids.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import type { Resources } from '../resources.js';
import { lockJob } from '../../db/sql/lockJob.js';
import { choiceNamed } from './choiceNamed.js';
import { recordJobEvent } from './jobEvents.js';
import { applyTransition, publishJobEvents } from './jobLifecycle.js';
import { cancelOutstandingWork } from './outstandingWork.js';

/** Answers that name none of a question's choices before the job stops (the third one stops it). */
export const MAX_UNUSABLE_ANSWERS = 3;

/**
 * Records the user's answer to an open question. When no question stays open, a job
 * waiting in NEEDS_INPUT goes back to PLANNING (resumePlanning) — or to RUNNING
 * (resumeRun) when the run supervisor asked — and `question.answered` tells that agent to
 * continue from its saved history.
 *
 * A question with choices takes only an answer that names one of them (choiceNamed.ts); the
 * answer stored is the one the agent can act on (the choice's text when it was named by its
 * number or by some of its words). An answer that names none, or several, is refused with a
 * ValidationError that repeats the choices, and the question stays open — recorded as a
 * `question.rejected` event, so the count survives restarts. The MAX_UNUSABLE_ANSWERS-th such
 * answer stops the job (the engine's `fail`, its outstanding work cancelled) with the question
 * and every answer it got.
 */
export async function answerQuestion(r: Resources, userId: string, questionId: string, answer: string) {
  if (!isUuid(questionId)) throw new NotFoundError('Question', questionId.slice(0, 80));
  const now = r.now();
  const outcome = await r.prisma.$transaction(async (tx) => {
    const q = await tx.question.findFirst({ where: { id: questionId, job: { ownerId: userId } } });
    if (!q) throw new NotFoundError('Question', questionId);
    const match = q.choices.length ? choiceNamed(answer, q.choices) : null;
    if (match && match.kind !== 'named') {
      // Answers to one job are counted one at a time (the job's row lock), so two at once
      // cannot both be the "second" and skip the stop.
      await lockJob(tx, q.jobId);
      const open = await tx.question.findUniqueOrThrow({ where: { id: q.id }, select: { status: true } });
      if (open.status !== 'OPEN') throw new ConflictError(`This question is already ${open.status.toLowerCase()}.`);
      const earlier = await rejectedAnswers(tx, q.jobId, q.id);
      const answers = [...earlier, answer.trim()];
      const why =
        match.kind === 'several' ? `names more than one of the choices (${match.choices.join('; ')})` : 'names none of the choices';
      const eventIds = [
        await recordJobEvent(tx, q.jobId, 'question.rejected', {
          questionId: q.id,
          answer: answer.trim(),
          attempt: answers.length,
          of: MAX_UNUSABLE_ANSWERS,
          reason: why,
        }),
      ];
      if (answers.length < MAX_UNUSABLE_ANSWERS) {
        const left = MAX_UNUSABLE_ANSWERS - answers.length;
        const message = `“${short(answer)}” ${why}. Answer with one of them, by its number or its words: ${numbered(q.choices)}. (${left} more answer${left === 1 ? '' : 's'} that name${left === 1 ? 's' : ''} none and the job stops.)`;
        return { kind: 'rejected' as const, jobId: q.jobId, eventIds, message, workers: [] as string[] };
      }
      const reason = `Stopped: ${MAX_UNUSABLE_ANSWERS} answers did not name one of the choices of the question “${q.text}” (${numbered(q.choices)}); the answers were ${answers.map((a) => `“${short(a)}”`).join(', ')}. Submit the job again and pick one of the choices.`;
      const t = await applyTransition(tx, now, q.jobId, 'fail', { reason, detail: { questionId: q.id } });
      const workers = await cancelOutstandingWork(
        tx,
        r,
        now,
        q.jobId,
        'The job stopped: its question was never answered with one of its choices.',
      );
      eventIds.push(...t.eventIds);
      return { kind: 'rejected' as const, jobId: q.jobId, eventIds, message: `“${short(answer)}” ${why}. ${reason}`, workers };
    }
    const stored = match?.kind === 'named' ? match.stored : answer.trim();
    const res = await tx.question.updateMany({
      where: { id: q.id, status: 'OPEN' },
      data: { status: 'ANSWERED', answer: stored, answeredAt: now },
    });
    if (res.count === 0) throw new ConflictError(`This question is already ${q.status.toLowerCase()}.`);
    const eventIds = [await recordJobEvent(tx, q.jobId, 'question.answered', { questionId: q.id, answer: stored })];
    const open = await tx.question.count({ where: { jobId: q.jobId, status: 'OPEN' } });
    const job = await tx.job.findUniqueOrThrow({ where: { id: q.jobId }, select: { status: true } });
    let resumed = false;
    // Who asked: the run supervisor's question resumes the run, the planner's the planning.
    const asker = q.agentRunId
      ? (await tx.agentRun.findUnique({ where: { id: q.agentRunId }, select: { agent: true } }))?.agent
      : undefined;
    const agent = asker === 'supervisor' ? ('supervisor' as const) : ('planner' as const);
    if (open === 0 && job.status === 'NEEDS_INPUT') {
      const t =
        agent === 'supervisor'
          ? await applyTransition(tx, now, q.jobId, 'resumeRun', { reason: 'The run supervisor is reading your answer.' })
          : await applyTransition(tx, now, q.jobId, 'resumePlanning', { reason: 'The planner is reading your answer.' });
      eventIds.push(...t.eventIds);
      resumed = true;
    }
    return {
      kind: 'answered' as const,
      question: { ...q, status: 'ANSWERED' as const, answer: stored, answeredAt: now },
      eventIds,
      resumed,
      agent,
    };
  });
  if (outcome.kind === 'rejected') {
    await publishJobEvents(r, outcome.jobId, outcome.eventIds);
    for (const workerId of outcome.workers) await r.events.emit({ type: 'worker.orders', workerId });
    throw new ValidationError(outcome.message, [{ path: ['input', 'answer'], message: outcome.message }]);
  }
  const { question, eventIds, resumed, agent } = outcome;
  await publishJobEvents(r, question.jobId, eventIds);
  await r.events.emit({ type: 'question.answered', jobId: question.jobId, questionId: question.id, resumed, agent });
  return question;
}

/** The answers already refused for this question, oldest first. */
async function rejectedAnswers(tx: Pick<Resources['prisma'], 'jobEvent'>, jobId: string, questionId: string): Promise<string[]> {
  const rows = await tx.jobEvent.findMany({
    where: { jobId, kind: 'question.rejected', payload: { path: ['questionId'], equals: questionId } },
    orderBy: { id: 'asc' },
    select: { payload: true },
  });
  return rows.map((e) => String((e.payload as { answer?: unknown }).answer ?? ''));
}

const numbered = (choices: readonly string[]) => choices.map((c, i) => `${i + 1}) ${c}`).join('; ');
const short = (s: string) => {
  const one = s.trim().replace(/\s+/g, ' ');
  return one.length > 120 ? `${one.slice(0, 119)}…` : one;
};

/**
 * An answer must name one of the question's choices: one that names none (or several) is
 * refused as a typed ValidationError and the question stays open; the third such answer
 * stops the job (FAILED, through the job engine) with the question and every answer it got.
 * A real API with the builtin planner, which asks "Which script should run?" (main.py,
 * train.py) for a project with two entry points.
 */
import { describe, expect, it } from 'vitest';
import { createBuiltinClient } from '../src/agents/builtin/builtinModel.js';
import { createJobAt, eventsOf, insertOnlineWorker, waitFor } from './helpers/agents.js';
import { startTestApi } from './helpers/api.js';

const api = await startTestApi({}, { model: createBuiltinClient() });
const user = await api.signUp();
const prisma = api.server.db.prisma;
await insertOnlineWorker(prisma, user.userId);

const TWO_ENTRY_POINTS = {
  'main.py': 'if __name__ == "__main__":\n    print("main ran")\n',
  'train.py': 'if __name__ == "__main__":\n    print("trained")\n',
};

const ANSWER = `mutation($i: AnswerQuestionInput!) { answerQuestion(input: $i) {
  __typename ... on Question { status answer } ... on ValidationError { message issues { path message } } ... on Error { message } } }`;
const answer = async (questionId: string, text: string) =>
  (await api.gql(ANSWER, { i: { questionId, answer: text } }, user.token)).data.answerQuestion;

async function asked() {
  const { jobId } = await createJobAt(api.url, user.token, TWO_ENTRY_POINTS);
  const q = await waitFor('the planner to ask', async () => {
    const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    if (job.status === 'FAILED') throw new Error(`planning failed: ${job.statusReason}`);
    return job.status === 'NEEDS_INPUT' && (await prisma.question.findFirst({ where: { jobId, status: 'OPEN' } }));
  });
  expect(q.choices).toEqual(['main.py', 'train.py']);
  return { jobId, q };
}

describe('answers that name none of the choices', () => {
  it('are refused with the choices repeated; the question stays open; a number then answers it and planning goes on', async () => {
    const { jobId, q } = await asked();
    const refused = await answer(q.id, '%%% garbage');
    expect(refused).toEqual({
      __typename: 'ValidationError',
      message:
        '“%%% garbage” names none of the choices. Answer with one of them, by its number or its words: 1) main.py; 2) train.py. (2 more answers that name none and the job stops.)',
      issues: [{ path: ['input', 'answer'], message: expect.stringContaining('names none of the choices') }],
    });
    expect(await prisma.question.findUniqueOrThrow({ where: { id: q.id } })).toMatchObject({ status: 'OPEN', answer: null });
    expect((await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('NEEDS_INPUT');
    expect((await eventsOf(prisma, jobId, 'question.rejected')).map((e) => e.payload)).toEqual([
      { questionId: q.id, answer: '%%% garbage', attempt: 1, of: 3, reason: 'names none of the choices' },
    ]);

    const several = await answer(q.id, 'main.py or train.py');
    expect(several.__typename).toBe('ValidationError');
    expect(several.message).toMatch(
      /^“main\.py or train\.py” names more than one of the choices \(main\.py; train\.py\)\. .*\(1 more answer that names none and the job stops\.\)$/,
    );

    // The choice's number: stored as the choice's text, which is what the planner reads.
    expect(await answer(q.id, '2')).toEqual({ __typename: 'Question', status: 'ANSWERED', answer: 'train.py' });
    const plan = await waitFor('the plan', () => prisma.plan.findFirst({ where: { jobId } }));
    expect(plan.command).toBe('python train.py');
  });

  it('the third stops the job with the question and the answers; later answers find it closed', async () => {
    const { jobId, q } = await asked();
    expect((await answer(q.id, 'a')).__typename).toBe('ValidationError');
    expect((await answer(q.id, 'zzz')).__typename).toBe('ValidationError');
    const last = await answer(q.id, 'whatever you think');
    expect(last.__typename).toBe('ValidationError');
    const job = await prisma.job.findUniqueOrThrow({ where: { id: jobId } });
    expect(job.status).toBe('FAILED');
    expect(job.statusReason).toBe(
      `Stopped: 3 answers did not name one of the choices of the question “${q.text}” (1) main.py; 2) train.py); the answers were “a”, “zzz”, “whatever you think”. Submit the job again and pick one of the choices.`,
    );
    expect(last.message).toBe(`“whatever you think” names none of the choices. ${job.statusReason}`);
    expect((await prisma.question.findUniqueOrThrow({ where: { id: q.id } })).status).toBe('CANCELLED');
    const status = (await eventsOf(prisma, jobId, 'job.status')).at(-1)!.payload as Record<string, unknown>;
    expect(status).toMatchObject({ status: 'FAILED', from: 'NEEDS_INPUT', transition: 'fail', questionId: q.id });
    expect((await eventsOf(prisma, jobId, 'question.rejected')).map((e) => (e.payload as { attempt: number }).attempt)).toEqual([1, 2, 3]);

    for (const late of ['train.py', '%%% garbage']) {
      expect(await answer(q.id, late)).toEqual({ __typename: 'ConflictError', message: 'This question is already cancelled.' });
    }
  });

  it('a question without choices takes any words', async () => {
    const { jobId, q } = await asked();
    await prisma.question.update({ where: { id: q.id }, data: { choices: [] } });
    expect(await answer(q.id, '%%% garbage')).toEqual({ __typename: 'Question', status: 'ANSWERED', answer: '%%% garbage' });
    expect(await eventsOf(prisma, jobId, 'question.rejected')).toEqual([]);
  });

  it('answers sent at once are counted one at a time: three at once stop the job exactly once', async () => {
    const { jobId, q } = await asked();
    const results = await Promise.all(['x1', 'x2', 'x3'].map((a) => answer(q.id, a)));
    expect(results.map((r) => r.__typename)).toEqual(['ValidationError', 'ValidationError', 'ValidationError']);
    expect(results.filter((r) => r.message.includes('Stopped:'))).toHaveLength(1);
    expect((await prisma.job.findUniqueOrThrow({ where: { id: jobId } })).status).toBe('FAILED');
    expect((await eventsOf(prisma, jobId, 'job.status')).filter((e) => (e.payload as { status: string }).status === 'FAILED')).toHaveLength(
      1,
    );
  });
});

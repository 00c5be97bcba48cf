import type { Db } from '../../db/client.js';
import { recordJobEvent } from './jobEvents.js';
import { applyTransition } from './jobLifecycle.js';

export interface AskUserInput {
  jobId: string;
  /** The agent run and tool call that asked (the planner resumes that run with the answer). */
  agentRunId: string;
  callId: string;
  text: string;
  choices: string[];
}

/**
 * The planner asks the user (`askUser`, PLANNING → NEEDS_INPUT), or the run supervisor does
 * (`askDuringRun`, RUNNING → NEEDS_INPUT), inside the caller's
 * transaction: the Question and the transition commit together or not at all. The
 * caller publishes `eventIds` after commit.
 */
export async function askUser(
  tx: Db,
  now: Date,
  input: AskUserInput,
  transition: 'askUser' | 'askDuringRun' = 'askUser',
): Promise<{ questionId: string; eventIds: string[] }> {
  const q = await tx.question.create({
    data: { jobId: input.jobId, agentRunId: input.agentRunId, callId: input.callId, text: input.text, choices: input.choices },
  });
  const asked = await recordJobEvent(tx, input.jobId, 'question.asked', { questionId: q.id, text: input.text, choices: input.choices });
  const moved = await applyTransition(tx, now, input.jobId, transition, { reason: input.text });
  return { questionId: q.id, eventIds: [asked, ...moved.eventIds] };
}

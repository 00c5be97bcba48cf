/**
 * The agents' own cost (issue 17, part 2): a model call that a model billed — an OpenAI model,
 * whose response reports its tokens; the builtin rules cost nothing — is priced at the configured
 * rates (AGENT_INPUT_CAD_PER_MTOK, AGENT_OUTPUT_CAD_PER_MTOK), kept as an AgentUsage row and added
 * to the job's cost (Job.costCad, which the cap and the claim count) and, apart, Job.agentCostCad.
 */
import { Prisma as P } from '../../generated/prisma/client.js';
import type { Resources } from '../resources.js';

/** Models whose tokens are billed: the OpenAI client's (`openai:<model>`). */
export const isBilledModel = (model: string) => model.startsWith('openai:');

export function modelCallCostCad(
  rates: { inputCadPerMTok: number; outputCadPerMTok: number },
  usage: { inputTokens: number; outputTokens: number },
): number {
  return (usage.inputTokens * rates.inputCadPerMTok + usage.outputTokens * rates.outputCadPerMTok) / 1e6;
}

export async function recordModelUsage(
  r: Pick<Resources, 'prisma' | 'config' | 'events'>,
  call: { jobId: string; runId: string; model: string; usage: { inputTokens: number; outputTokens: number } | undefined },
): Promise<void> {
  if (!call.usage || !isBilledModel(call.model)) return;
  // Six decimals, like the usage entries: adding to Job.costCad stays exact.
  const cost = new P.Decimal(modelCallCostCad(r.config.agents, call.usage).toFixed(6));
  await r.prisma.$transaction([
    r.prisma.agentUsage.create({
      data: {
        jobId: call.jobId,
        runId: call.runId,
        model: call.model,
        inputTokens: call.usage.inputTokens,
        outputTokens: call.usage.outputTokens,
        costCad: cost,
      },
    }),
    r.prisma.job.update({ where: { id: call.jobId }, data: { costCad: { increment: cost }, agentCostCad: { increment: cost } } }),
  ]);
  await r.events.emit({ type: 'job.updated', jobId: call.jobId });
}

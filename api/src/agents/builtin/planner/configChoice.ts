/**
 * Rule: a nanoGPT-style configurator takes config files (positional) and --key=value overrides.
 * The config the request names (by its path, else by its name as a whole word — `shakespeare` is
 * not named by `train_shakespeare_char`), or the user is asked which (the script's own defaults
 * are a choice too); the chosen file is read and its literal settings kept (`configSettings`).
 */
import { call, type PlannerRule } from './planning.js';

export const configChoice: PlannerRule = (p) => {
  const { entry, request, uploaded, readCall, readOf } = p;
  if (entry.cli !== 'configurator') return undefined;
  const configs = [...uploaded].filter((x) => /(^|\/)configs?\/[^/]+\.py$/.test(x)).sort();
  const stem = (c: string) => c.split('/').pop()!.replace(/\.py$/, '');
  const word = (w: string) => new RegExp(`(^|[^\\w/])${w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w])`).test(request);
  const byPath = configs.filter((c) => request.includes(c));
  const namedCfg = byPath.length
    ? byPath
    : configs.filter((c) => word(stem(c)) || word(stem(c).replace(/^(train|finetune|eval|sample)_/, '')));
  let configFile: string | null = null;
  if (namedCfg.length === 1) configFile = namedCfg[0]!;
  else if (configs.length) {
    const defaults = `${entry.path}'s own defaults`;
    const choices = [...(namedCfg.length ? namedCfg : configs), defaults];
    const answer = p.answerTo('Which configuration');
    if (!answer)
      return call('ask_user', {
        question: `Which configuration should ${entry.path} run with? It takes a config file (${configs.join(', ')}) and --key=value overrides.`,
        choices,
      });
    const said = answer.split(':').pop() ?? '';
    configFile = choices.find((c) => c !== defaults && said.includes(c)) ?? configs.find((c) => said.includes(stem(c))) ?? null;
  }
  if (configFile) {
    if (readCall(configFile)) return call('read_file', readCall(configFile)!);
    const text = readOf(configFile) ?? '';
    p.configSettings = Object.fromEntries(
      [...text.matchAll(/^([A-Za-z_]\w*)\s*=\s*(['"]?)([^'"#\n]*?)\2\s*(?:#.*)?$/gm)].map((m) => [m[1]!, m[3]!.trim()]),
    );
  }
  p.configFile = configFile;
  return undefined;
};

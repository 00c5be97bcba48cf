/**
 * A tool call of an agent in one sentence of words — what was asked, what came back — for
 * the Agent activity list (the JSON stays one click away). Pure: web/test/toolCallWords.test.ts.
 * Arguments and results arrive as strings, usually JSON; unknown tools and shapes fall back
 * to their name and a short summary rather than to nothing.
 */
type O = Record<string, unknown>;

const parse = (s: string | undefined): unknown => {
  if (s === undefined) return undefined;
  const t = s.trim();
  if (!(t.startsWith('{') || t.startsWith('['))) return s;
  try {
    return JSON.parse(t);
  } catch {
    return s;
  }
};
const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
const short = (s: string, n = 90) => {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length > n ? `${one.slice(0, n - 1)}…` : one;
};
const count = (n: number, what: string) => `${n.toLocaleString('en-US')} ${what}${n === 1 ? '' : 's'}`;

/** What the agent asked for, as a verb phrase: "read train.py", "asked you: …". */
export function callWords(name: string | undefined, args: string | undefined): string {
  const a = (parse(args) ?? {}) as O;
  const o = a && typeof a === 'object' && !Array.isArray(a) ? a : {};
  const path = str(o.path) ?? str(o.file);
  switch (name) {
    case 'list_files':
      return str(o.dir) || str(o.path) ? `listed the files under ${str(o.dir) ?? str(o.path)}` : "listed the project's files";
    case 'read_file':
      return `read ${path ?? 'a file'}${typeof o.offset === 'number' && o.offset > 0 ? ` from character ${o.offset}` : ''}`;
    case 'read_candidate_file':
      return `read ${path ?? 'a file'} of the candidate code`;
    case 'list_settings':
      return `listed the settings${path ? ` of ${path}` : ''}`;
    case 'check_dependencies':
    case 'find_dependencies':
      return 'checked what the code imports against what the workers have';
    case 'check_torch_apis':
      return 'checked the PyTorch APIs the code uses';
    case 'network_capacity':
      return 'asked which workers the network has';
    case 'list_eligible_workers':
      return 'listed the workers that can run the job';
    case 'submit_plan':
      return `submitted a plan${str(o.summary) ? `: ${short(str(o.summary)!, 80)}` : ''}`;
    case 'ask_user':
      return `asked you: ${short(str(o.question) ?? str(o.text) ?? 'a question', 120)}`;
    case 'consult_specialist':
      return `consulted the ${str(o.specialist) ?? str(o.name) ?? ''} specialist`.replace('  ', ' ');
    case 'get_job':
      return "read the job's state";
    case 'search_logs':
      return `searched the logs${str(o.query) ? ` for “${short(str(o.query)!, 40)}”` : ''}`;
    case 'take_action':
      return `asked the system to ${str(o.action)?.replace(/_/g, ' ') ?? 'act'}${str(o.reason) ? ` (${short(str(o.reason)!, 80)})` : ''}`;
    case 'remember':
      return `noted: ${short(str(o.text) ?? str(o.finding) ?? '', 100)}`;
    case 'propose_patch':
      return `proposed a change${path ? ` to ${path}` : ''}${str(o.summary) ? `: ${short(str(o.summary)!, 80)}` : ''}`;
    case 'similar_preparations':
      return 'looked up how similar code was prepared before';
    case 'give_up':
      return `gave up${str(o.reason) ? `: ${short(str(o.reason)!, 100)}` : ''}`;
    default: {
      const keys = Object.entries(o)
        .filter(([, v]) => v !== null && v !== undefined && typeof v !== 'object')
        .slice(0, 3)
        .map(([k, v]) => `${k} ${short(String(v), 30)}`);
      return `used ${name ?? 'a tool'}${keys.length ? ` (${keys.join(', ')})` : ''}`;
    }
  }
}

const LISTS = ['files', 'settings', 'workers', 'classes', 'results', 'matches', 'lines', 'items', 'dependencies', 'missing'];

/** What came back, in a few words: "an error: …", "12 files", "2,345 characters", the answer. */
export function resultWords(output: string | undefined): string {
  const v = parse(output);
  if (v === undefined || v === '') return 'nothing';
  if (typeof v === 'string') return short(v);
  if (Array.isArray(v)) return count(v.length, 'item');
  const o = v as O;
  const err = str(o.error) ?? str((o.error as O | undefined)?.message);
  if (err) return `an error: ${short(err)}`;
  if (o.ok === false && str(o.reason)) return `a refusal: ${short(str(o.reason)!)}`;
  for (const k of ['answer', 'summary', 'message', 'outcome', 'status']) if (str(o[k])) return short(str(o[k])!);
  const content = typeof o.content === 'string' ? o.content : typeof o.text === 'string' ? o.text : undefined;
  if (content !== undefined) return `${count(content.length, 'character')}${o.truncated || o.nextOffset ? ' (more follows)' : ''}`;
  for (const k of LISTS)
    if (Array.isArray(o[k]))
      return count(
        (o[k] as unknown[]).length,
        k
          .replace(/s$/, '')
          .replace(/classe$/, 'class')
          .replace(/dependencie$/, 'dependency')
          .replace(/matche$/, 'match'),
      );
  const keys = Object.keys(o);
  return keys.length ? `${keys.slice(0, 4).join(', ')}${keys.length > 4 ? '…' : ''}` : 'nothing';
}

/** The whole line: "read train.py → 2,345 characters"; a call still running says so. */
export function toolCallLine(name: string | undefined, args: string | undefined, output: string | undefined, done: boolean): string {
  return `${callWords(name, args)} → ${done ? resultWords(output) : 'waiting for the result'}`;
}

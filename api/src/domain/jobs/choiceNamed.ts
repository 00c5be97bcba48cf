/**
 * Which of a question's choices an answer names. An agent that offers choices acts on one of
 * them (the builtin planner reads the answer for the choice's words), so an answer that names
 * none — or several — cannot be acted on and is refused before it reaches the agent.
 *
 * An answer names a choice by:
 *   - its text (case, spacing and trailing punctuation aside), or its number as shown (1-based:
 *     "2", "2.", "#2", "option 2");
 *   - containing its whole text ("train.py, please");
 *   - words that belong to that choice only ("train" for train.py beside main.py; "migrate"
 *     for "Migrate those calls …" beside "Stop the job"); a word shorter than a choice's word
 *     counts when it is its first four letters or more ("migrat").
 * Words every choice shares, and little words (the, a, it …), name nothing.
 */

export type ChoiceMatch =
  /** `stored` is what the agent reads: the user's words when they contain the choice's text, else the choice's text. */
  { kind: 'named'; index: number; choice: string; stored: string } | { kind: 'none' } | { kind: 'several'; choices: string[] };

const norm = (s: string) =>
  s
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.!?;,]+$/, '')
    .trim();

const LITTLE = new Set(
  'a an the and or of to in on at for by with it its is be do does please i me my we you your this that these those one just yes no ok okay choose pick option choice answer'.split(
    ' ',
  ),
);

/** The words of a text that can name something: letters and digits, two or more, not little ones. */
function words(s: string): string[] {
  return (norm(s).match(/[\p{L}\p{N}]+/gu) ?? []).filter((w) => w.length >= 2 && !LITTLE.has(w));
}

export function choiceNamed(answer: string, choices: readonly string[]): ChoiceMatch {
  const said = norm(answer);
  if (!said) return { kind: 'none' };
  const named = (index: number, stored: string): ChoiceMatch => ({ kind: 'named', index, choice: choices[index]!, stored });

  const exact = choices.findIndex((c) => norm(c) === said);
  if (exact >= 0) return named(exact, choices[exact]!);
  const num = /^(?:#|no\.?\s*|n°\s*|option\s*|choice\s*)?(\d{1,3})[.)]?$/i.exec(said);
  if (num) {
    const n = Number(num[1]);
    return n >= 1 && n <= choices.length ? named(n - 1, choices[n - 1]!) : { kind: 'none' };
  }

  // The whole text of a choice, inside the answer (the longest wins when one contains another).
  const inside = choices.map((c, i) => ({ c: norm(c), i })).filter(({ c }) => c.length >= 2 && said.includes(c));
  const longest = inside.filter(({ c }) => !inside.some((o) => o.c !== c && o.c.includes(c)));
  if (longest.length === 1) return named(longest[0]!.i, answer.trim());
  if (longest.length > 1) return { kind: 'several', choices: longest.map(({ i }) => choices[i]!) };

  // Words that belong to one choice only.
  const choiceWords = choices.map((c) => words(c));
  const has = (ws: string[], w: string) => ws.some((x) => x === w || (w.length >= 4 && x.startsWith(w)));
  const votes = new Set<number>();
  for (const w of words(answer)) {
    const owners = choiceWords.flatMap((ws, i) => (has(ws, w) ? [i] : []));
    if (owners.length === 1) votes.add(owners[0]!);
  }
  if (votes.size === 1) {
    const i = [...votes][0]!;
    return named(i, choices[i]!);
  }
  if (votes.size > 1) return { kind: 'several', choices: [...votes].sort((a, b) => a - b).map((i) => choices[i]!) };
  return { kind: 'none' };
}

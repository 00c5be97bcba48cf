/**
 * A minimal XML reader, enough for tool outputs like `nvidia-smi -q -x` (elements, attributes, text,
 * comments, the prolog and DOCTYPE, CDATA, the five predefined entities and numeric references).
 * Not a validating parser; it throws on malformed input, which the callers turn into a probe error.
 * Written here because the worker has no XML dependency and the format is this simple.
 */

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
  children: XmlElement[];
  text: string;
}

export function parseXml(src: string): XmlElement {
  const root: XmlElement = { name: '#document', attrs: {}, children: [], text: '' };
  const stack: XmlElement[] = [root];
  let i = 0;
  const top = () => stack[stack.length - 1]!;
  while (i < src.length) {
    const lt = src.indexOf('<', i);
    if (lt < 0) {
      top().text += decode(src.slice(i));
      break;
    }
    if (lt > i) top().text += decode(src.slice(i, lt));
    if (src.startsWith('<!--', lt)) {
      i = need(src.indexOf('-->', lt), 'comment') + 3;
    } else if (src.startsWith('<![CDATA[', lt)) {
      const end = need(src.indexOf(']]>', lt), 'CDATA');
      top().text += src.slice(lt + 9, end);
      i = end + 3;
    } else if (src.startsWith('<?', lt)) {
      i = need(src.indexOf('?>', lt), 'processing instruction') + 2;
    } else if (src.startsWith('<!', lt)) {
      i = skipDeclaration(src, lt);
    } else if (src.startsWith('</', lt)) {
      const end = need(src.indexOf('>', lt), 'end tag');
      const name = src.slice(lt + 2, end).trim();
      const open = stack.pop();
      if (!open || open === root || open.name !== name) throw new Error(`unexpected </${name}>`);
      i = end + 1;
    } else {
      const end = findTagEnd(src, lt);
      let body = src.slice(lt + 1, end);
      const selfClosing = body.endsWith('/');
      if (selfClosing) body = body.slice(0, -1);
      const nm = /^([A-Za-z_][\w.:-]*)/.exec(body);
      if (!nm) throw new Error(`bad tag at ${lt}`);
      const el: XmlElement = { name: nm[1]!, attrs: parseAttrs(body.slice(nm[1]!.length)), children: [], text: '' };
      top().children.push(el);
      if (!selfClosing) stack.push(el);
      i = end + 1;
    }
  }
  if (stack.length !== 1) throw new Error(`unclosed <${top().name}>`);
  return root;
}

/** The first descendant reached by following child names, e.g. child(gpu, 'fb_memory_usage', 'total'). */
export function child(el: XmlElement | undefined, ...path: string[]): XmlElement | undefined {
  let cur = el;
  for (const name of path) cur = cur?.children.find((c) => c.name === name);
  return cur;
}

export function childText(el: XmlElement | undefined, ...path: string[]): string | null {
  const c = child(el, ...path);
  return c ? c.text.trim() : null;
}

function need(at: number, what: string): number {
  if (at < 0) throw new Error(`unterminated ${what}`);
  return at;
}

function findTagEnd(src: string, from: number): number {
  let quote: string | null = null;
  for (let j = from + 1; j < src.length; j++) {
    const ch = src[j];
    if (quote) {
      if (ch === quote) quote = null;
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (ch === '>') return j;
  }
  throw new Error('unterminated tag');
}

function skipDeclaration(src: string, from: number): number {
  // <!DOCTYPE x SYSTEM "y" [ ... ]> may nest one level of brackets.
  let depth = 0;
  for (let j = from + 2; j < src.length; j++) {
    const ch = src[j];
    if (ch === '[') depth++;
    else if (ch === ']') depth--;
    else if (ch === '>' && depth <= 0) return j + 1;
  }
  throw new Error('unterminated declaration');
}

function parseAttrs(s: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  const re = /([A-Za-z_][\w.:-]*)\s*=\s*("([^"]*)"|'([^']*)')/g;
  for (let m = re.exec(s); m; m = re.exec(s)) attrs[m[1]!] = decode(m[3] ?? m[4] ?? '');
  return attrs;
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decode(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|\w+);/g, (all, ent: string) => {
    if (ent.startsWith('#x')) return String.fromCodePoint(parseInt(ent.slice(2), 16));
    if (ent.startsWith('#')) return String.fromCodePoint(parseInt(ent.slice(1), 10));
    return ENTITIES[ent] ?? all;
  });
}

/**
 * An executed Jupyter notebook (nbformat 4 JSON) read into what the job page may show of it.
 *
 * The notebook is a stranger's file: nothing in it is ever rendered as markup. Markdown and
 * sources stay text; of a rich output only raster images (as data: URLs, which an <img> cannot
 * run) and text/plain are kept; HTML, SVG, JavaScript, widgets and any other type become a
 * "not shown" note naming the type. ANSI escape codes (IPython's coloured tracebacks, coloured
 * logs) are stripped from every output's text.
 */

/** The largest notebook the page reads (a bigger one stays a download). */
export const NOTEBOOK_MAX_BYTES = 20 * 1024 * 1024;

export type NotebookOutput =
  | { kind: 'stream'; name: 'stdout' | 'stderr'; text: string }
  | { kind: 'image'; dataUrl: string; alt: string }
  | { kind: 'text'; text: string }
  /** A rich output with nothing safe to show: `what` names its type ("html", "svg", "javascript", or the MIME type). */
  | { kind: 'hidden'; what: string }
  | { kind: 'error'; ename: string; evalue: string; traceback: string };

export type NotebookCell =
  | { kind: 'markdown'; source: string }
  | { kind: 'raw'; source: string }
  | { kind: 'code'; executionCount: number | null; source: string; outputs: NotebookOutput[] };

export type ReadNotebook = { ok: true; cells: NotebookCell[] } | { ok: false; reason: string };

const RASTER = ['image/png', 'image/jpeg'];
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const FRIENDLY: Record<string, string> = {
  'text/html': 'html',
  'image/svg+xml': 'svg',
  'application/javascript': 'javascript',
  'text/javascript': 'javascript',
  'text/markdown': 'markdown',
  'text/latex': 'latex',
};

/**
 * ECMA-48 escape sequences: CSI (colours, cursor moves), OSC (titles, links), character-set
 * designations (ESC ( B) and the other two-character ones (ESC 7), then any stray ESC.
 */
// eslint-disable-next-line no-control-regex -- matching the ESC control character is the point.
const ANSI = /\u001b(?:\[[0-?]*[ -/]*[@-~]|\][^\u0007\u001b]*(?:\u0007|\u001b\\)|[ -/]+[0-~]|[0-~])|\u001b/g;

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}

/** A terminal's view of text written with carriage returns (progress bars): each line keeps what was written after its last `\r`. */
function overwriteCarriageReturns(text: string): string {
  return text
    .replace(/\r\n/g, '\n')
    .split('\n')
    .map((line) => line.slice(line.lastIndexOf('\r') + 1))
    .join('\n');
}

class Invalid extends Error {}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** nbformat's "multiline string": a string or a list of strings. */
function multiline(v: unknown, what: string): string {
  if (typeof v === 'string') return v;
  if (Array.isArray(v) && v.every((s) => typeof s === 'string')) return v.join('');
  throw new Invalid(`${what} is not text`);
}

function readOutput(o: unknown, where: string): NotebookOutput {
  if (!isObject(o)) throw new Invalid(`${where} is not an output`);
  switch (o.output_type) {
    case 'stream':
      return {
        kind: 'stream',
        name: o.name === 'stderr' ? 'stderr' : 'stdout',
        text: overwriteCarriageReturns(stripAnsi(multiline(o.text ?? '', `${where}'s text`))),
      };
    case 'error': {
      const traceback = Array.isArray(o.traceback) ? o.traceback.filter((l): l is string => typeof l === 'string') : [];
      return {
        kind: 'error',
        ename: stripAnsi(String(o.ename ?? 'Error')),
        evalue: stripAnsi(String(o.evalue ?? '')),
        traceback: stripAnsi(traceback.join('\n')),
      };
    }
    case 'execute_result':
    case 'display_data':
    case 'update_display_data': {
      const data = isObject(o.data) ? o.data : {};
      const plain = data['text/plain'] === undefined ? null : stripAnsi(multiline(data['text/plain'], `${where}'s text/plain`));
      for (const mime of RASTER) {
        if (data[mime] === undefined) continue;
        const b64 = multiline(data[mime], `${where}'s ${mime}`).replace(/\s+/g, '');
        if (BASE64.test(b64)) return { kind: 'image', dataUrl: `data:${mime};base64,${b64}`, alt: plain?.trim() || 'Image output' };
      }
      if (plain !== null) return { kind: 'text', text: plain };
      const mime = Object.keys(data)[0];
      return { kind: 'hidden', what: mime === undefined ? 'empty' : (FRIENDLY[mime] ?? mime) };
    }
    default:
      throw new Invalid(`${where} has an unknown output type`);
  }
}

function readCell(c: unknown, n: number): NotebookCell {
  const where = `cell ${n}`;
  if (!isObject(c)) throw new Invalid(`${where} is not a cell`);
  const source = multiline(c.source ?? '', `${where}'s source`);
  switch (c.cell_type) {
    case 'markdown':
      return { kind: 'markdown', source };
    case 'raw':
      return { kind: 'raw', source };
    case 'code': {
      if (c.outputs !== undefined && !Array.isArray(c.outputs)) throw new Invalid(`${where}'s outputs are not a list`);
      const outputs = (c.outputs ?? []).map((o, i) => readOutput(o, `${where}'s output ${i + 1}`));
      return { kind: 'code', executionCount: typeof c.execution_count === 'number' ? c.execution_count : null, source, outputs };
    }
    default:
      throw new Invalid(`${where} has an unknown cell type`);
  }
}

/** The cells of a notebook file's text, or why it is not a notebook this page can show. */
export function readNotebook(text: string): ReadNotebook {
  let nb: unknown;
  try {
    nb = JSON.parse(text);
  } catch {
    return { ok: false, reason: 'it is not valid JSON' };
  }
  if (!isObject(nb) || !Array.isArray(nb.cells)) return { ok: false, reason: 'it is not a Jupyter notebook (no list of cells)' };
  if (nb.nbformat !== 4) return { ok: false, reason: `it is nbformat ${String(nb.nbformat)}; only version 4 notebooks are shown` };
  try {
    return { ok: true, cells: nb.cells.map((c, i) => readCell(c, i + 1)) };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, reason: `it is not a valid notebook: ${err.message}` };
    throw err;
  }
}

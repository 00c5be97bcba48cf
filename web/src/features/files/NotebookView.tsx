import { useEffect, useId, useState } from 'react';
import { fetchBlob } from '../../lib/blobs';
import { formatBytes } from '../../lib/format';
import { NOTEBOOK_MAX_BYTES, readNotebook, type NotebookCell, type NotebookOutput } from './readNotebook';

type Loaded = { sha256: string } & ({ ok: true; cells: NotebookCell[] } | { ok: false; reason: string });

/**
 * An executed notebook output shown read-only, cell by cell: markdown as plain text, code with its
 * `In [n]`, and its outputs as readNotebook.ts keeps them (text, stdout/stderr, raster images, errors;
 * never the notebook's HTML, SVG or scripts). The file comes through the same authenticated blob
 * fetch as its download; one that is too large or not a notebook is a one-line message.
 */
export function NotebookView({ path, sha256, size }: { path: string; sha256: string; size: number }) {
  const headingId = useId();
  const tooLarge = size > NOTEBOOK_MAX_BYTES;
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  useEffect(() => {
    if (tooLarge) return;
    let live = true;
    fetchBlob(sha256, path)
      .then(async (blob): Promise<Loaded> => {
        if (blob.size > NOTEBOOK_MAX_BYTES)
          return { sha256, ok: false, reason: `it is ${formatBytes(blob.size)}, over the ${formatBytes(NOTEBOOK_MAX_BYTES)} shown here` };
        return { sha256, ...readNotebook(await blob.text()) };
      })
      .catch((err: unknown): Loaded => ({ sha256, ok: false, reason: asClause((err as Error).message) }))
      .then((r) => {
        if (live) setLoaded(r);
      });
    return () => {
      live = false;
    };
  }, [sha256, path, tooLarge]);

  const current = tooLarge
    ? ({ sha256, ok: false, reason: `it is ${formatBytes(size)}, over the ${formatBytes(NOTEBOOK_MAX_BYTES)} shown here` } as const)
    : loaded?.sha256 === sha256
      ? loaded
      : null;
  return (
    <section className="notebook" aria-labelledby={headingId} data-testid="notebook-view">
      <h3 id={headingId}>
        {path} <span className="muted small">(read-only)</span>
      </h3>
      {!current ? (
        <p className="muted small" role="status">
          Loading the notebook…
        </p>
      ) : !current.ok ? (
        <p className="error-text" role="alert" data-testid="notebook-error">
          This notebook cannot be shown: {current.reason}. Download it to open it in Jupyter.
        </p>
      ) : current.cells.length === 0 ? (
        <p className="muted small">The notebook has no cells.</p>
      ) : (
        <ol className="nb-cells" aria-label={`Cells of ${path}`}>
          {current.cells.map((cell, i) => (
            <Cell key={i} cell={cell} />
          ))}
        </ol>
      )}
    </section>
  );
}

function Cell({ cell }: { cell: NotebookCell }) {
  if (cell.kind === 'markdown') {
    // Plain text with its line breaks: the notebook's markdown may carry HTML, which is never rendered.
    return (
      <li className="nb-cell nb-markdown" data-cell="markdown">
        {cell.source}
      </li>
    );
  }
  if (cell.kind === 'raw') {
    return (
      <li className="nb-cell" data-cell="raw">
        <div className="nb-prompt">Raw</div>
        <pre className="nb-source">{cell.source}</pre>
      </li>
    );
  }
  const prompt = `In [${cell.executionCount ?? ' '}]`;
  return (
    <li className="nb-cell" data-cell="code">
      <div className="nb-prompt">{prompt}:</div>
      <pre className="nb-source">{cell.source}</pre>
      {cell.outputs.length > 0 && (
        <div className="nb-outputs" role="group" aria-label={`Output of ${prompt}`}>
          {cell.outputs.map((o, i) => (
            <Output key={i} output={o} />
          ))}
        </div>
      )}
    </li>
  );
}

function Output({ output: o }: { output: NotebookOutput }) {
  switch (o.kind) {
    case 'stream':
      return o.name === 'stderr' ? (
        <div className="nb-stderr" data-output="stderr">
          <div className="nb-label">stderr</div>
          <pre>{o.text}</pre>
        </div>
      ) : (
        <pre data-output="stdout">{o.text}</pre>
      );
    case 'image':
      return <img src={o.dataUrl} alt={o.alt} data-output="image" />;
    case 'text':
      return <pre data-output="text">{o.text}</pre>;
    case 'hidden':
      return (
        <p className="muted small" data-output="hidden">
          ({o.what} output not shown)
        </p>
      );
    case 'error':
      return (
        <div className="nb-error" data-output="error">
          <div className="nb-error-head">
            <strong>{o.ename}</strong>
            {o.evalue && `: ${o.evalue}`}
          </div>
          {o.traceback && <pre>{o.traceback}</pre>}
        </div>
      );
  }
}

/** "This file is no longer available." as the end of our sentence: "…: this file is no longer available". */
const asClause = (message: string) => message.charAt(0).toLowerCase() + message.slice(1).replace(/\.$/, '');

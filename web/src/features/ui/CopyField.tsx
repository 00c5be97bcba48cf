import { useState } from 'react';

export function CopyField({ value, label }: { value: string; label: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // Clipboard API unavailable (insecure origin): select the text for Ctrl+C instead.
      const sel = window.getSelection();
      const el = document.querySelector(`[data-copy="${CSS.escape(label)}"]`);
      if (sel && el) sel.selectAllChildren(el);
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <div className="copy">
      <code data-copy={label} aria-label={label}>
        {value}
      </code>
      <button type="button" onClick={copy}>
        {copied ? 'Copied' : 'Copy'}
      </button>
    </div>
  );
}

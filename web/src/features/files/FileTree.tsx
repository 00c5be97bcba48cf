import { formatBytes } from '../../lib/format';
import { buildTree, type TreeNode } from './collectFiles';

export function FileTree({ files, label }: { files: { path: string; size: number }[]; label: string }) {
  const tree = buildTree(files);
  return (
    // The tree role sits on the list itself, so its items are its children (axe: aria-required-children).
    <div className="tree">
      <ul role="tree" aria-label={label}>
        {tree.map((n) => (
          <Node key={n.name} node={n} depth={0} />
        ))}
      </ul>
    </div>
  );
}

function Node({ node, depth }: { node: TreeNode; depth: number }) {
  if (!node.children) {
    return (
      <li role="treeitem" aria-selected={false}>
        {node.name} <span className="muted">{formatBytes(node.size)}</span>
      </li>
    );
  }
  return (
    <li role="treeitem" aria-expanded={depth < 2} aria-selected={false}>
      <details open={depth < 2}>
        <summary>
          {node.name}/ <span className="muted">{formatBytes(node.size)}</span>
        </summary>
        <ul role="group">
          {node.children.map((c) => (
            <Node key={c.name + (c.children ? '/' : '')} node={c} depth={depth + 1} />
          ))}
        </ul>
      </details>
    </li>
  );
}

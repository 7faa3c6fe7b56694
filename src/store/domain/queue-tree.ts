// The queue tree as plain data: one tree shared by all clusters.

export interface QueueLink {
  name: string;
  parentName: string | null;
}

export class QueueTree {
  private readonly parents = new Map<string, string | null>();
  private readonly children = new Map<string, string[]>();

  constructor(queues: readonly QueueLink[]) {
    for (const q of queues) {
      this.parents.set(q.name, q.parentName);
      if (q.parentName !== null) {
        const list = this.children.get(q.parentName) ?? [];
        list.push(q.name);
        this.children.set(q.parentName, list);
      }
    }
  }

  has(name: string): boolean {
    return this.parents.has(name);
  }

  isLeaf(name: string): boolean {
    return !this.children.get(name)?.length;
  }

  childrenOf(name: string): readonly string[] {
    return this.children.get(name) ?? [];
  }

  /** `name`, its parent, … up to the root. */
  pathToRoot(name: string): string[] {
    const path: string[] = [];
    for (let q: string | null | undefined = name; q != null && !path.includes(q); q = this.parents.get(q)) {
      path.push(q);
    }
    return path;
  }

  /** `name` and every queue below it. */
  subtree(name: string): string[] {
    const out: string[] = [];
    const stack = [name];
    while (stack.length) {
      const q = stack.pop()!;
      if (!this.has(q) || out.includes(q)) continue;
      out.push(q);
      stack.push(...this.childrenOf(q));
    }
    return out;
  }

  /** True when `queue` is `root` or lies below it. */
  isWithin(queue: string, root: string): boolean {
    return this.pathToRoot(queue).includes(root);
  }

  /** Making `newParent` the parent of `name` would close a loop. */
  wouldCycle(name: string, newParent: string): boolean {
    return this.isWithin(newParent, name);
  }
}

// Jobs held in a tree mirroring the queue hierarchy: the next job is found by walking
// down from the top, taking the best child queue at each level (queue order compares
// the best job of each subtree), then the best job of the leaf (KAI:
// actions/utils/job_order_by_queue.go). As a victim queue the orders are reversed.
import type { JobInfo } from "../../api/podgroup-info.js";
import type { QueueInfo } from "../../api/queue-info.js";
import { isActiveAllocated } from "../../api/status.js";
import type { Session } from "../../framework/session.js";
import { Heap } from "../../util/heap.js";

export interface JobsOrderOptions {
  filterUnready?: boolean;
  filterNonPending?: boolean;
  filterNonPreemptible?: boolean;
  filterNonActiveAllocated?: boolean;
  victimQueue?: boolean;
  /** Jobs kept per leaf queue (undefined = all). */
  maxJobsQueueDepth?: number;
}

class QueueNode {
  parent: QueueNode | null = null;
  readonly children: QueueNode[] = [];
  jobs: Heap<JobInfo> | null = null;
  jobCount = 0;
  constructor(readonly queue: QueueInfo) {}
  get isLeaf(): boolean {
    return this.jobs !== null;
  }
  get empty(): boolean {
    return this.isLeaf ? this.jobs!.size === 0 : this.children.length === 0;
  }
}

export class JobsOrderByQueues {
  private readonly roots: QueueNode[] = [];
  private readonly nodes = new Map<string, QueueNode>();
  private readonly popped = new Map<string, JobInfo[]>();

  constructor(
    private readonly ssn: Session,
    private readonly opts: JobsOrderOptions = {},
  ) {}

  initialize(jobs: Iterable<JobInfo>): this {
    const o = this.opts;
    const perQueue = new Map<string, JobInfo[]>();
    for (const job of jobs) {
      if (o.filterUnready && !job.isReadyForScheduling) continue;
      if (o.filterNonPending && job.countOf("Pending") === 0) continue;
      if (o.filterNonPreemptible && !job.preemptible) continue;
      if (o.filterNonActiveAllocated && !job.pods.some((p) => isActiveAllocated(p.status))) continue;
      const q = this.ssn.queues.get(job.queue);
      if (!q || !q.isLeaf) continue;
      if (q.parent && !this.ssn.queues.has(q.parent)) continue;
      const list = perQueue.get(q.name) ?? [];
      list.push(job);
      perQueue.set(q.name, list);
    }
    for (const [, list] of perQueue) {
      if (o.maxJobsQueueDepth !== undefined) {
        list.sort((a, b) => this.ssn.jobOrder(a, b));
        const keep = o.victimQueue ? list.slice(-o.maxJobsQueueDepth) : list.slice(0, o.maxJobsQueueDepth);
        for (const j of keep) this.pushJob(j);
      } else for (const j of list) this.pushJob(j);
    }
    return this;
  }

  get isEmpty(): boolean {
    return this.roots.length === 0;
  }

  get length(): number {
    let n = 0;
    for (const node of this.nodes.values()) if (node.isLeaf) n += node.jobs!.size;
    return n;
  }

  pushJob(job: JobInfo): void {
    const q = this.ssn.queues.get(job.queue);
    if (!q || !q.isLeaf) return;
    let leaf = this.nodes.get(q.name);
    if (!leaf) {
      leaf = new QueueNode(q);
      const victim = !!this.opts.victimQueue;
      leaf.jobs = new Heap<JobInfo>((a, b) => {
        const c = this.ssn.jobOrder(a, b);
        return victim ? c > 0 : c < 0;
      });
      this.nodes.set(q.name, leaf);
      leaf.jobs.push(job);
      this.link(leaf);
    } else leaf.jobs!.push(job);
  }

  private link(child: QueueNode): void {
    const q = child.queue;
    if (!q.parent) {
      this.roots.push(child);
      return;
    }
    const pq = this.ssn.queues.get(q.parent);
    if (!pq) return;
    let parent = this.nodes.get(pq.name);
    const isNew = !parent;
    if (!parent) {
      parent = new QueueNode(pq);
      this.nodes.set(pq.name, parent);
    }
    child.parent = parent;
    parent.children.push(child);
    if (isNew) this.link(parent);
  }

  popNextJob(): JobInfo | null {
    let level = this.roots;
    let node: QueueNode | null = null;
    for (;;) {
      node = this.best(level);
      if (!node) return null;
      if (node.isLeaf) break;
      level = node.children;
    }
    const job = node.jobs!.pop()!;
    if (this.opts.victimQueue) {
      const list = this.popped.get(node.queue.name) ?? [];
      list.push(job);
      this.popped.set(node.queue.name, list);
    }
    this.prune(node);
    return job;
  }

  /** Remove emptied nodes from the tree, bottom up. */
  private prune(node: QueueNode): void {
    let n: QueueNode | null = node;
    while (n && n.empty) {
      const siblings = n.parent ? n.parent.children : this.roots;
      siblings.splice(siblings.indexOf(n), 1);
      this.nodes.delete(n.queue.name);
      n = n.parent;
    }
  }

  private best(level: QueueNode[]): QueueNode | null {
    let best: QueueNode | null = null;
    for (const n of level) {
      if (n.empty) continue;
      if (!best || this.before(n, best)) best = n;
    }
    return best;
  }

  private before(l: QueueNode, r: QueueNode): boolean {
    const victim = !!this.opts.victimQueue;
    const [lp, lv] = this.bestJobOf(l);
    const [rp, rv] = this.bestJobOf(r);
    const res = this.ssn.queueOrder(l.queue, r.queue, lp, rp, lv, rv);
    return victim ? !res : res;
  }

  private bestJobOf(node: QueueNode): [JobInfo | null, JobInfo[] | null] {
    let n = node;
    while (!n.isLeaf) {
      const b = this.best(n.children);
      if (!b) return [null, null];
      n = b;
    }
    const top = n.jobs!.peek() ?? null;
    if (this.opts.victimQueue) {
      const victims = [...(this.popped.get(n.queue.name) ?? [])];
      if (top) victims.push(top);
      return [null, victims];
    }
    return [top, null];
  }
}

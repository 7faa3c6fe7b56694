// Jobs held in a tree mirroring the queue hierarchy (KAI: actions/utils/job_order_by_queue.go).
// Each queue node keeps its children in a heap ordered by queue order (comparing the best
// job of each subtree); a leaf keeps its jobs in a heap ordered by job order. After a pop
// or push only the path to that leaf is marked for re-sorting, and a marked node is
// re-sifted when it comes to the top — KAI's lazy reordering, reproduced as is. As a
// victim queue both orders are reversed and the jobs taken so far count for rule 5.
// When no queued job's order can change before it is popped (fixedJobOrder), a leaf sorts its
// jobs once instead (SortedQueue): job order is strict (ties go by uid), so they come out the same.
import type { JobInfo } from "../../api/podgroup-info.js";
import type { QueueInfo } from "../../api/queue-info.js";
import type { Session } from "../../framework/session.js";
import { Heap } from "../../util/heap.js";
import { SortedQueue } from "../../util/sorted-queue.js";

export interface JobsOrderOptions {
  filterUnready?: boolean;
  filterNonPending?: boolean;
  filterNonPreemptible?: boolean;
  filterNonActiveAllocated?: boolean;
  victimQueue?: boolean;
  /** Jobs kept per leaf queue (undefined = all). */
  maxJobsQueueDepth?: number;
  /**
   * The caller changes no queued job's order (priority, gang state, ...) before popping it: only
   * a popped job changes, and it comes back through pushJob. Each leaf then sorts its jobs once
   * (victim queues and capped leaves keep their heaps: their layout matters).
   */
  fixedJobOrder?: boolean;
}

/** A leaf's jobs: a heap (KAI's), or sorted once when their order is fixed. */
type LeafJobs = Heap<JobInfo> | SortedQueue<JobInfo>;

class QueueNode {
  parent: QueueNode | null = null;
  needsReorder = false;
  /** A leaf's victims as victimsOf gives them, until its jobs change (read on every comparison). */
  victims: JobInfo[] | null = null;
  constructor(
    readonly queue: QueueInfo,
    readonly children: Heap<QueueNode> | null,
    readonly jobs: LeafJobs | null,
  ) {}
  get isLeaf(): boolean {
    return this.jobs !== null;
  }
  get size(): number {
    return this.jobs ? this.jobs.size : this.children!.size;
  }
}

export class JobsOrderByQueues {
  private roots: Heap<QueueNode> | null = null;
  private readonly nodes = new Map<string, QueueNode>();
  private readonly popped = new Map<string, JobInfo[]>();
  /**
   * While initializing: per leaf, the jobs that are not its first in order. A leaf's heap then
   * holds only its best job so far (all that is read of it meanwhile) and takes the rest in
   * one linear heapify at the end instead of a sift per job. The order they come out in is the
   * same: job order is strict (ties go by uid).
   */
  private staged: Map<QueueNode, JobInfo[]> | null = null;
  /** Leaves keep sorted jobs (SortedQueue) instead of heaps. */
  private readonly sorted: boolean;
  /** While initializing with sorted leaves: the leaves filled so far. */
  private filling: QueueNode[] | null = null;

  constructor(
    private readonly ssn: Session,
    private readonly opts: JobsOrderOptions = {},
  ) {
    const capped = opts.maxJobsQueueDepth !== undefined && opts.maxJobsQueueDepth >= 0;
    this.sorted = !!opts.fixedJobOrder && !opts.victimQueue && !capped;
  }

  initialize(jobs: Iterable<JobInfo>): this {
    const o = this.opts;
    // A capped leaf drops by position on overflow: the layout matters there, so no staging.
    if (this.sorted) this.filling = [];
    else if (o.maxJobsQueueDepth === undefined || o.maxJobsQueueDepth < 0) this.staged = new Map();
    // Cheapest first: most jobs of a busy cluster have no pending pod.
    for (const job of jobs) {
      if (o.filterNonPending && job.countOf("Pending") === 0) continue;
      if (o.filterNonPreemptible && !job.preemptible) continue;
      if (o.filterNonActiveAllocated && job.numActiveAllocated === 0) continue;
      if (o.filterUnready && !job.isReadyForScheduling) continue;
      const q = this.ssn.queues.get(job.queue);
      if (!q || !q.isLeaf) continue;
      if (q.parent && !this.ssn.queues.has(q.parent)) continue;
      this.pushJob(job);
    }
    if (this.staged) for (const [leaf, rest] of this.staged) (leaf.jobs as Heap<JobInfo>).addAll(rest);
    this.staged = null;
    if (this.filling) for (const leaf of this.filling) (leaf.jobs as SortedQueue<JobInfo>).settle();
    this.filling = null;
    return this;
  }

  /** An independent copy in the same state: popping one leaves the other as it is. */
  clone(): JobsOrderByQueues {
    const copy = new JobsOrderByQueues(this.ssn, this.opts);
    const nodes = new Map<QueueNode, QueueNode>();
    const copyOf = (n: QueueNode): QueueNode => {
      let c = nodes.get(n);
      if (c) return c;
      c = new QueueNode(
        n.queue,
        n.children ? n.children.mapped(copyOf, copy.nodeLess) : null,
        n.jobs ? copy.ownJobs(n.jobs) : null,
      );
      c.needsReorder = n.needsReorder;
      nodes.set(n, c);
      return c;
    };
    if (this.roots) copy.roots = this.roots.mapped(copyOf, copy.nodeLess);
    for (const [name, n] of this.nodes) {
      const c = copyOf(n);
      if (n.parent) c.parent = copyOf(n.parent);
      copy.nodes.set(name, c);
    }
    for (const [name, jobs] of this.popped) copy.popped.set(name, [...jobs]);
    return copy;
  }

  /** A copy of another order's leaf jobs, ordered by this one's comparators. */
  private ownJobs(jobs: LeafJobs): LeafJobs {
    return jobs instanceof SortedQueue ? jobs.copy(this.jobCompare) : jobs.mapped((j) => j, this.jobLess);
  }

  /** Every job still queued, in no particular order. */
  remaining(): JobInfo[] {
    const out: JobInfo[] = [];
    for (const node of this.nodes.values()) if (node.jobs) for (const j of node.jobs.toArray()) out.push(j);
    return out;
  }

  get isEmpty(): boolean {
    return !this.roots || this.roots.size === 0;
  }

  get length(): number {
    let n = 0;
    for (const node of this.nodes.values()) if (node.jobs) n += node.jobs.size;
    return n;
  }

  private readonly nodeLess = (l: QueueNode, r: QueueNode): boolean => {
    const victim = !!this.opts.victimQueue;
    if (l.size === 0) return !victim;
    if (r.size === 0) return victim;
    if (!victim) return this.ssn.queueOrder(l.queue, r.queue, this.bestJob(l), this.bestJob(r), null, null);
    return !this.ssn.queueOrder(l.queue, r.queue, null, null, this.victimsOf(l), this.victimsOf(r));
  };

  private readonly jobCompare = (a: JobInfo, b: JobInfo): number => this.ssn.jobOrder(a, b);

  private readonly jobLess = (a: JobInfo, b: JobInfo): boolean => {
    const c = this.ssn.jobOrder(a, b);
    return this.opts.victimQueue ? c >= 0 : c < 0;
  };

  private nodeHeap(): Heap<QueueNode> {
    return new Heap<QueueNode>(this.nodeLess);
  }

  pushJob(job: JobInfo): void {
    const q = this.ssn.queues.get(job.queue);
    if (!q || !q.isLeaf) return;
    let leaf = this.nodes.get(q.name);
    const isNew = !leaf;
    if (!leaf) {
      const jobs = this.sorted
        ? new SortedQueue<JobInfo>(this.jobCompare)
        : new Heap<JobInfo>(this.jobLess, this.opts.maxJobsQueueDepth ?? -1);
      leaf = new QueueNode(q, null, jobs);
      this.nodes.set(q.name, leaf);
    }
    const jobs = leaf.jobs!;
    if (jobs instanceof SortedQueue) {
      if (this.filling) {
        if (isNew) this.filling.push(leaf);
        jobs.add(job);
      } else jobs.push(job);
    } else if (this.staged && jobs.size > 0) {
      let rest = this.staged.get(leaf);
      if (!rest) {
        rest = [];
        this.staged.set(leaf, rest);
      }
      rest.push(this.jobLess(job, jobs.peek()!) ? jobs.replaceTop(job)! : job);
    } else jobs.push(job);
    leaf.victims = null;
    if (isNew) this.link(leaf);
    for (let n: QueueNode | null = leaf; n; n = n.parent) n.needsReorder = true;
  }

  /** Put a new node under its parent (creating ancestors as needed). */
  private link(child: QueueNode): void {
    const q = child.queue;
    if (!q.parent) {
      if (!child.parent) {
        this.roots ??= this.nodeHeap();
        this.roots.push(child);
      }
      return;
    }
    const pq = this.ssn.queues.get(q.parent);
    if (!pq) return;
    let parent = this.nodes.get(pq.name);
    const isNew = !parent;
    if (!parent) {
      parent = new QueueNode(pq, this.nodeHeap(), null);
      this.nodes.set(pq.name, parent);
    }
    if (!child.parent) {
      child.parent = parent;
      parent.children!.push(child);
    }
    if (isNew) this.link(parent);
  }

  popNextJob(): JobInfo | null {
    if (this.isEmpty) return null;
    const leaf = this.traverseToLeaf(this.roots!);
    if (!leaf) return null;
    const job = leaf.jobs!.pop()!;
    leaf.victims = null;
    if (this.opts.victimQueue) {
      const list = this.popped.get(leaf.queue.name) ?? [];
      list.push(job);
      this.popped.set(leaf.queue.name, list);
    }
    this.afterPop(leaf);
    return job;
  }

  private traverseToLeaf(heap: Heap<QueueNode>): QueueNode | null {
    for (;;) {
      const node = this.nextNode(heap);
      if (!node) return null;
      if (node.isLeaf) return node;
      heap = node.children!;
    }
  }

  private nextNode(heap: Heap<QueueNode>): QueueNode | null {
    for (;;) {
      const node = heap.peek();
      if (!node) return null;
      if (node.needsReorder) {
        heap.fix(0);
        node.needsReorder = false;
        continue;
      }
      return node.size === 0 ? null : node;
    }
  }

  /** Drop emptied nodes (each is at the top of its parent's heap), else mark the path for re-sorting. */
  private afterPop(node: QueueNode): void {
    if (node.size === 0) {
      if (node.parent) node.parent.children!.pop();
      else this.roots!.pop();
      this.nodes.delete(node.queue.name);
      if (node.parent) this.afterPop(node.parent);
      return;
    }
    for (let n: QueueNode | null = node; n; n = n.parent) n.needsReorder = true;
  }

  private bestLeaf(node: QueueNode): QueueNode | null {
    let n = node;
    while (!n.isLeaf) {
      const b = n.children!.peek();
      if (!b) return null;
      n = b;
    }
    return n;
  }

  /** The pending job that represents the subtree (the top of its best leaf). */
  private bestJob(node: QueueNode): JobInfo | null {
    const leaf = this.bestLeaf(node);
    return leaf ? (leaf.jobs!.peek() ?? null) : null;
  }

  /** The victims that represent the subtree: jobs taken from its best leaf so far plus its next one. */
  private victimsOf(node: QueueNode): JobInfo[] | null {
    const n = this.bestLeaf(node);
    if (!n) return null;
    if (n.victims) return n.victims;
    const victims = [...(this.popped.get(n.queue.name) ?? [])];
    const top = n.jobs!.peek();
    if (top) victims.push(top);
    n.victims = victims;
    return victims;
  }
}

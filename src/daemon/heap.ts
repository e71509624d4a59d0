/** A binary min-heap keyed by `at` (epoch ms): the scheduler's one timer queue. */
export class MinHeap<T extends { at: number }> {
  private readonly items: T[] = [];

  get size(): number {
    return this.items.length;
  }

  /** The earliest item, or undefined. */
  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if ((a[p] as T).at <= item.at) break;
      a[i] = a[p] as T;
      i = p;
    }
    a[i] = item;
  }

  pop(): T | undefined {
    const a = this.items;
    const top = a[0];
    const last = a.pop();
    if (a.length > 0 && last !== undefined) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        let mAt = last.at;
        if (l < a.length && (a[l] as T).at < mAt) {
          m = l;
          mAt = (a[l] as T).at;
        }
        if (r < a.length && (a[r] as T).at < mAt) m = r;
        if (m === i) break;
        a[i] = a[m] as T;
        i = m;
      }
      a[i] = last;
    }
    return top;
  }

  /** Removes every item for which `drop` is true (O(n), for reloads). */
  removeWhere(drop: (item: T) => boolean): void {
    const keep = this.items.filter((x) => !drop(x));
    this.items.length = 0;
    for (const x of keep) this.push(x);
  }
}

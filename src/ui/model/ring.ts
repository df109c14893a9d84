/** A fixed-capacity buffer that overwrites its oldest item: O(1) push, no array shifting. */
export class Ring<T> {
  private readonly items: (T | undefined)[];
  private next = 0;
  private count = 0;

  constructor(readonly capacity: number) {
    this.items = new Array<T | undefined>(capacity);
  }

  get size(): number {
    return this.count;
  }

  push(item: T): void {
    this.items[this.next] = item;
    this.next = (this.next + 1) % this.capacity;
    if (this.count < this.capacity) this.count++;
  }

  /** Up to `limit` items, newest first. */
  newest(limit = this.count): T[] {
    const out: T[] = [];
    const n = Math.min(limit, this.count);
    for (let i = 1; i <= n; i++) out.push(this.items[(this.next - i + this.capacity) % this.capacity] as T);
    return out;
  }
}

/** How many streaming requests are open at once: routing through the tiers or committed. */
export class StreamSlots {
  open = 0;

  /** Takes a slot unless `max` are taken. */
  take(max: number): boolean {
    if (this.open >= max) return false;
    this.open++;
    return true;
  }

  give(): void {
    this.open--;
  }
}
